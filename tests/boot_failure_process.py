"""A gunicorn worker that cannot boot, closing its event loop as gunicorn's master stops, for
the test of a worker's boot failure (``tests/test_bot_http_workers.py``):

    python -m tests.boot_failure_process

With the bot's settings in the environment (a token Discord rejects), it makes and sets up
``bot.gunicorn_app``'s application on a loop with a SIGTERM handler, as aiohttp's worker
does, then closes the loop as that worker does on its way out; a SIGTERM (the master
stopping for the failure) is sent the moment the loop's self-pipe is closed, the moment
asyncio's ``close()`` has not yet reset the signal wakeup fd. It prints ``exit N``, N the
code the worker would exit with.
"""

from __future__ import annotations

import asyncio
import os
import signal
from asyncio import selector_events

from bot.gunicorn_app import make_app

CLOSE_SELF_PIPE = selector_events.BaseSelectorEventLoop._close_self_pipe  # type: ignore[attr-defined]


def close_self_pipe_then_sigterm(loop: selector_events.BaseSelectorEventLoop) -> None:
    CLOSE_SELF_PIPE(loop)
    os.kill(os.getpid(), signal.SIGTERM)


def main() -> None:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.add_signal_handler(signal.SIGTERM, lambda: None)
    code: object = None
    try:
        runner = loop.run_until_complete(make_app())
        loop.run_until_complete(runner.setup())
    except SystemExit as stop:
        code = stop.code
    selector_events.BaseSelectorEventLoop._close_self_pipe = close_self_pipe_then_sigterm  # type: ignore[attr-defined]
    loop.close()
    print(f"exit {code}", flush=True)


if __name__ == "__main__":
    main()
