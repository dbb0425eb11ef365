# Build: docker build -t tttbot .
# Run with SQLite: docker run --env-file .env -v tttbot-data:/data tttbot
# Run with PostgreSQL: docker compose up -d (see compose.yaml)

# -- build: the pinned dependencies and the bot into a virtual environment -------------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /venv
WORKDIR /src
# Exactly the versions and hashes of requirements.lock (docs/operating.md says how it is made).
COPY requirements.lock ./
RUN /venv/bin/pip install --require-hashes --no-deps -r requirements.lock
COPY pyproject.toml README.md ./
COPY game ./game
COPY tournament ./tournament
COPY bot ./bot
RUN /venv/bin/pip install --no-deps .

# -- run: the environment only, as an unprivileged user ---------------------------------------
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/venv/bin:$PATH \
    DATABASE_URL=sqlite:////data/tttbot.sqlite3 \
    TTT_HEARTBEAT_FILE=/tmp/tttbot.heartbeat
RUN groupadd --gid 10001 tttbot \
    && useradd --create-home --uid 10001 --gid 10001 tttbot \
    && mkdir /data && chown 10001:10001 /data
COPY --from=build /venv /venv
USER 10001:10001
WORKDIR /data
# Games and stats live on a volume (with SQLite), so they survive a new container.
VOLUME ["/data"]
# Healthy while ready: python -m bot.healthcheck asks the bot's /readyz when TTT_HTTP_PORT is
# set (every shard connected, the database answering), else reads TTT_HEARTBEAT_FILE, which
# the bot touches every 15 s while its gateway connection is up.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-m", "bot.healthcheck"]
# docker stop sends SIGTERM: the bot stops taking interactions, finishes those in flight
# (10 s at most) and closes its database.
STOPSIGNAL SIGTERM
CMD ["python", "-m", "bot"]
