"""The committed corpus is what the generator writes (deterministic), and it is large enough."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from tests.conftest import ROOT
from tests.hostile.conftest import CORPUS, HERE


def digests(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*") if p.is_file()}


def test_generator_is_deterministic_and_matches_the_committed_corpus(tmp_path):
    subprocess.run([sys.executable, str(HERE / "make_corpus.py"), str(tmp_path)], cwd=ROOT, check=True,
                   capture_output=True)
    assert digests(tmp_path / "corpus") == digests(CORPUS)
    assert (tmp_path / "manifest.json").read_bytes() == (HERE / "manifest.json").read_bytes()
    assert len(digests(CORPUS)) >= 80
