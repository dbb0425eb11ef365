# docker build -t tttbot . && docker run --env-file .env -v tttbot-data:/data tttbot
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY game ./game
COPY bot ./bot
RUN pip install . && rm -rf /src

# Run unprivileged; games and stats live on a volume so they survive a new container.
RUN useradd --create-home --uid 10001 tttbot && mkdir /data && chown tttbot /data
USER tttbot
WORKDIR /data
VOLUME ["/data"]
ENV DATABASE_URL=sqlite:////data/tttbot.sqlite3

# docker stop sends SIGTERM, which the bot handles by finishing in-flight replies and closing.
CMD ["python", "-m", "bot"]
