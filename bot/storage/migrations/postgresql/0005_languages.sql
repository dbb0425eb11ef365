-- The language a game's and a challenge's public messages are shown in: the server's, as the
-- interaction that created them told (a catalogue code: 'en', 'de', 'pt_BR'...). Kept so that
-- what the bot redraws on its own (a timeout, an expired challenge) reads like the rest.
-- Everything from before is English.
ALTER TABLE games ADD COLUMN language TEXT NOT NULL DEFAULT 'en';
ALTER TABLE challenges ADD COLUMN language TEXT NOT NULL DEFAULT 'en';
