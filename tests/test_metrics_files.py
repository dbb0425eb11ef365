"""bot.metrics_files: a dead gunicorn worker's counts folded into one file a kind, and the
fold and the scrapes kept apart by a lock; on prometheus_client's own files, in a folder of
the test's."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.mmap_dict import MmapedDict, mmap_key

from bot import metrics_files
from bot.metrics_files import (
    DIRECTORY_VARIABLE,
    LOCK_NAME,
    LockedMultiProcessCollector,
    fold_exited_worker,
    folded_file,
)

INTERACTIONS = ("tttbot_interactions", "tttbot_interactions_total", "Interactions handled.")
ANSWERS = ("tttbot_answer_seconds", "Time to a first answer.")
# How long a blocked lock is given to show it blocks.
PATIENCE = 0.3


def write_counts(directory: Path, owner: int | str, answered: float, refused: float) -> None:
    """A worker's counter file and histogram file, as prometheus_client writes them: two
    series of a counter; two buckets, a sum, of a histogram."""
    metric, name, text = INTERACTIONS
    counters = MmapedDict(str(directory / f"counter_{owner}.db"))  # type: ignore[no-untyped-call]
    for outcome, value in (("answered", answered), ("refused", refused)):
        key = mmap_key(metric, name, ["kind", "outcome"], ["click", outcome], text)
        counters.write_value(key, value, 0.0)  # type: ignore[no-untyped-call]
    counters.close()  # type: ignore[no-untyped-call]
    metric, text = ANSWERS
    histograms = MmapedDict(str(directory / f"histogram_{owner}.db"))  # type: ignore[no-untyped-call]
    for name, labels, value in (
        (f"{metric}_bucket", ["0.01"], answered),
        (f"{metric}_bucket", ["+Inf"], refused),
        (f"{metric}_sum", [], answered * 0.5),  # exact in binary: sums in any order agree
    ):
        key = mmap_key(metric, name, ["le"] if labels else [], labels, text)
        histograms.write_value(key, value, 0.0)  # type: ignore[no-untyped-call]
    histograms.close()  # type: ignore[no-untyped-call]


def scraped(directory: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What a scrape of every file in ``directory`` reports."""
    monkeypatch.setenv(DIRECTORY_VARIABLE, str(directory))
    registry = CollectorRegistry()
    LockedMultiProcessCollector(registry)
    return generate_latest(registry).decode()


@contextmanager
def holding(directory: Path, operation: int) -> Iterator[None]:
    """The fold's lock, held as a scrape (LOCK_SH) or a fold (LOCK_EX) would."""
    with (directory / LOCK_NAME).open("a") as lock:
        fcntl.flock(lock, operation)
        yield


def test_a_folded_workers_counts_are_reported_as_before_from_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_counts(tmp_path, 101, answered=5, refused=1)
    write_counts(tmp_path, 102, answered=7, refused=0)
    write_counts(tmp_path, 103, answered=11, refused=2)
    before = scraped(tmp_path, monkeypatch)
    assert 'tttbot_interactions_total{kind="click",outcome="answered"} 23.0' in before
    fold_exited_worker(tmp_path, 101)
    fold_exited_worker(tmp_path, 103)
    assert scraped(tmp_path, monkeypatch) == before
    assert sorted(path.name for path in tmp_path.glob("*.db")) == [
        "counter_102.db",
        "counter_folded.db",
        "histogram_102.db",
        "histogram_folded.db",
    ]
    # The folded file holds the two workers' values added up, key by key.
    folded = MmapedDict.read_all_values_from_file(str(folded_file(tmp_path, "counter")))  # type: ignore[no-untyped-call]
    assert sorted(value for _, value, _, _ in folded) == [3.0, 16.0]


def test_a_worker_that_counted_nothing_or_was_folded_already_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_counts(tmp_path, 101, answered=5, refused=1)
    write_counts(tmp_path, 102, answered=7, refused=0)
    fold_exited_worker(tmp_path, 101)
    before = scraped(tmp_path, monkeypatch)
    fold_exited_worker(tmp_path, 101)  # its files are gone already
    fold_exited_worker(tmp_path, 999)  # it never wrote one
    assert scraped(tmp_path, monkeypatch) == before
    assert not any(tmp_path.glob("*.new"))


def test_a_fold_waits_for_a_scrape_reading_the_files(tmp_path: Path) -> None:
    """Else a scrape could read the folded file after the fold and the worker's own before
    its deletion: that worker counted twice."""
    write_counts(tmp_path, 101, answered=5, refused=1)
    fold = threading.Thread(target=fold_exited_worker, args=(tmp_path, 101))
    with holding(tmp_path, fcntl.LOCK_SH):
        fold.start()
        fold.join(PATIENCE)
        assert fold.is_alive()
        assert (tmp_path / "counter_101.db").exists()
        assert not folded_file(tmp_path, "counter").exists()
    fold.join()
    assert not (tmp_path / "counter_101.db").exists()
    assert folded_file(tmp_path, "counter").exists()


def test_a_scrape_waits_for_a_fold_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_counts(tmp_path, 101, answered=5, refused=1)
    texts: list[str] = []
    scrape = threading.Thread(target=lambda: texts.append(scraped(tmp_path, monkeypatch)))
    with holding(tmp_path, fcntl.LOCK_EX):
        scrape.start()
        scrape.join(PATIENCE)
        assert scrape.is_alive()
        assert texts == []
    scrape.join()
    assert 'tttbot_interactions_total{kind="click",outcome="answered"} 5.0' in texts[0]


def test_a_fold_kept_waiting_too_long_leaves_the_files_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A scrape's holder stopped midway (SIGSTOP) must not hold gunicorn's master for good:
    unfolded, the worker's files are counted as before."""
    write_counts(tmp_path, 101, answered=5, refused=1)
    monkeypatch.setattr(metrics_files, "FOLD_PATIENCE", 0.05)
    with holding(tmp_path, fcntl.LOCK_SH):
        fold_exited_worker(tmp_path, 101)
    assert (tmp_path / "counter_101.db").exists()
    assert not folded_file(tmp_path, "counter").exists()
    assert "did not fold the counts of worker 101" in caplog.text
    assert 'outcome="answered"} 5.0' in scraped(tmp_path, monkeypatch)


def test_a_scrape_kept_waiting_too_long_reads_the_files_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    write_counts(tmp_path, 101, answered=5, refused=1)
    monkeypatch.setattr(metrics_files, "SCRAPE_PATIENCE", 0.05)
    with holding(tmp_path, fcntl.LOCK_EX):
        assert 'outcome="answered"} 5.0' in scraped(tmp_path, monkeypatch)
    assert "while a fold held the lock" in caplog.text


def test_scrapes_do_not_wait_for_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_counts(tmp_path, 101, answered=5, refused=1)
    with holding(tmp_path, fcntl.LOCK_SH):
        assert 'outcome="refused"} 1.0' in scraped(tmp_path, monkeypatch)


def test_the_lock_file_is_not_read_as_a_workers_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_counts(tmp_path, 101, answered=5, refused=1)
    fold_exited_worker(tmp_path, 101)
    assert (tmp_path / LOCK_NAME).exists()
    assert os.path.getsize(tmp_path / LOCK_NAME) == 0
    assert 'outcome="answered"} 5.0' in scraped(tmp_path, monkeypatch)
