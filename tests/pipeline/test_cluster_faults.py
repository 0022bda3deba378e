"""Hostile clusters (issue 38): nothing waits on the network without a deadline, every cluster failure is
one message naming the address and no traceback, and `DASK=local:N` never starts more workers than the
machine has cores.

The "schedulers" here are sockets of the test's own: one that accepts and never answers (distributed waits
for its handshake without a deadline: an import waited forever), and ones that answer with bytes that
are not Dask's (they ended with "out of memory" and a `Client.__del__` traceback). Each runs an import as a
user does (`python -m analysis import-answers ... --dask tcp://...`, here `cli.main` in-process) with the
deadline lowered, and asserts the exit status, the message, no traceback and the database byte-identical.
"""

import gc
import hashlib
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from analysis import cli
from analysis.core.errors import Failure
from analysis.pipeline import dask_executor, executors

NEW_ANSWERS = "question,language,model,answer\ngerman:0,German,cluster-model,Eine Antwort.\n"


class FakeScheduler:
    """A TCP server on a free port of this machine that accepts every connection and then says `reply`
    (nothing: it never answers) and keeps the connection open."""

    def __init__(self, reply: bytes = b"") -> None:
        self.reply = reply
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.accepted.append(conn)
            if self.reply:
                try:
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def close(self) -> None:
        for conn in self.accepted:
            conn.close()
        self.server.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def db(tmp_path, tiny_database) -> Path:
    path = tmp_path / "db" / "calmqa.duckdb"
    path.parent.mkdir()
    shutil.copyfile(tiny_database, path)
    return path


SCHEDULERS = {
    "a port that accepts and never answers": (b"", "did not answer within 2 s"),
    "an HTTP server": (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "is not a Dask scheduler"),
    "bytes that claim a frame of exabytes": (b"\xff" * 64, "is not a Dask scheduler"),
    "a frame header and then nothing": (b"\x01\x00\x00\x00\x00\x00\x00\x00", "did not answer within 2 s"),
}


@pytest.mark.slow  # it loads the verdict models for the import
@pytest.mark.parametrize("case", SCHEDULERS, ids=list(SCHEDULERS))
def test_a_scheduler_that_is_not_one_is_one_message_within_its_deadline(case, db, tmp_path, capsys, monkeypatch):
    reply, expected = SCHEDULERS[case]
    monkeypatch.setattr(dask_executor, "CONNECT_SECONDS", 1)
    fake = FakeScheduler(reply)
    answers = tmp_path / "answers.csv"
    answers.write_text(NEW_ANSWERS, encoding="utf-8")
    before = digest(db)
    started = time.monotonic()
    try:
        capsys.readouterr()
        status = cli.main(["import-answers", str(answers), "--db", str(db), "--dask", fake.address])
        gc.collect()  # a client half made would say "Exception ignored in: <function Client.__del__>" here
        captured = capsys.readouterr()
    finally:
        fake.close()
    text = captured.out + captured.err
    assert status == 2 and captured.err.startswith("error: "), text
    assert "Traceback" not in text and "Exception ignored" not in text and "out of memory" not in text, text
    assert expected in text and fake.address in text and text.count("error:") == 1, text
    assert digest(db) == before and sorted(p.name for p in db.parent.iterdir()) == [db.name, db.name + ".lock"]
    assert time.monotonic() - started < 120  # it waited forever (a deadline of 2 s, and the models' loading)


def test_a_question_the_scheduler_does_not_answer_is_one_message(monkeypatch):
    """Every call of the driver that waits for the scheduler (its workers' versions, its threads, the
    plugin) has a deadline: a call that does not return in time is the message, naming the address."""
    monkeypatch.setattr(dask_executor, "ANSWER_SECONDS", 0.2)
    with pytest.raises(Failure, match=r"the Dask scheduler at tcp://10\.0\.0\.1:8786 did not answer within 0\.2 s"):
        dask_executor._asked("tcp://10.0.0.1:8786", time.sleep, 30)
    assert dask_executor._asked("tcp://10.0.0.1:8786", sum, [1, 2]) == 3


def cores() -> int:
    return len(os.sched_getaffinity(0))


@pytest.mark.parametrize("asked", [cores() + 1, 24, 99_999, 10**30])
def test_a_local_cluster_has_at_most_as_many_workers_as_the_machine_has_cores(asked, monkeypatch, capsys):
    started = []

    class Connected(Exception):
        pass

    def connect(dask, load, identity):
        started.append(dask)
        raise Connected

    monkeypatch.setattr(dask_executor, "connect", connect)
    with pytest.raises(Connected):
        with executors.start(executors.VerdictModels(), dask=f"local:{asked}"):
            pass
    assert started == [f"local:{cores()}"]
    note = capsys.readouterr().err
    assert f"DASK=local:{asked} asks for {asked:,} worker processes; this machine has {cores()} core" in note, note


@pytest.mark.parametrize("asked", [1, cores()])
def test_a_local_cluster_within_the_cores_is_as_asked_without_a_note(asked):
    assert executors.local_workers(f"local:{asked}") == (f"local:{asked}", None)
