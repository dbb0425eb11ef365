"""Tournaments: their state, their rules, and the rounds the bot runs in Discord."""
