"""Checkpoints that survive interruption (docs/Reliability.md): `amp-run --save-every K` and
`Session.fit(save_every=K, save_to=dir)` write the state atomically, so a run killed with
SIGKILL or SIGINT at a random moment leaves the last complete checkpoint, and resuming from it
continues bit for bit as the run that was not interrupted."""
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
PACKAGES = os.path.join(BUILD, "python_packages")
sys.path.insert(0, PACKAGES)

import amp_mlir  # noqa: E402

AMP_RUN = os.path.join(BUILD, "bin", "amp-run")
INPUTS = os.path.join(ROOT, "test", "amp-run", "Inputs")
LINEAR = os.path.join(INPUTS, "linear.mlir")
SAVE_EVERY = 7
KILLS = 3  # per signal and runner


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("data")
    subprocess.run([sys.executable, os.path.join(INPUTS, "make_linear_data.py"), str(out)],
                   check=True)
    return [str(out / "x.npy"), str(out / "y.npy")]


def amp_run(data, *args):
    run = subprocess.run([AMP_RUN, LINEAR, "--data", ",".join(data), "--seed", "7",
                          "--print-every", "0", *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run


def files(directory):
    return {name: open(os.path.join(directory, name), "rb").read()
            for name in sorted(os.listdir(directory))}


def steps_done(directory):
    return int(np.load(os.path.join(directory, "step.npy"))[0])


def interrupt(command, checkpoint, sig, rng):
    """Starts `command`, waits until its first checkpoint exists, then sends `sig` at a
    random moment of the next half second."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(checkpoint, "step.npy")):
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "no checkpoint after 60 s"
        time.sleep(0.01)
    time.sleep(rng.uniform(0, 0.5))
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert proc.returncode != 0, "the run ended before it was interrupted"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_amp_run_resumes_from_an_interrupted_run(data, tmp_path, sig):
    rng = random.Random(int(sig))
    for attempt in range(KILLS):
        checkpoint = str(tmp_path / f"ckpt{attempt}")
        interrupt([AMP_RUN, LINEAR, "--data", ",".join(data), "--seed", "7", "--print-every",
                   "0", "--steps", "1000000", "--save-every", str(SAVE_EVERY), "--save-state",
                   checkpoint], checkpoint, sig, rng)
        done = steps_done(checkpoint)
        assert done > 0 and done % SAVE_EVERY == 0
        # A complete checkpoint: every file of one run of `done` steps, nothing partial.
        reference = str(tmp_path / f"ref{attempt}")
        amp_run(data, "--steps", str(done), "--save-state", reference)
        assert files(checkpoint) == files(reference)
        # Resumed, it continues as the uninterrupted run.
        resumed, full = str(tmp_path / f"resumed{attempt}"), str(tmp_path / f"full{attempt}")
        amp_run(data, "--load-state", checkpoint, "--steps", "5", "--save-state", resumed)
        amp_run(data, "--steps", str(done + 5), "--save-state", full)
        assert files(resumed) == files(full)


TRAIN = """
import sys
sys.path.insert(0, {packages!r})
import numpy as np, amp_mlir
s = amp_mlir.Session({linear!r}, seed=7)
x, y = np.load({x!r}), np.load({y!r})
s.fit(x, y, steps=10**7, save_every={every}, save_to=sys.argv[1])
"""


def test_session_resumes_from_an_interrupted_fit(data, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN.format(packages=PACKAGES, linear=LINEAR, x=data[0], y=data[1],
                                   every=SAVE_EVERY))
    x, y = np.load(data[0]), np.load(data[1])
    rng = random.Random(3)
    for attempt, sig in enumerate([signal.SIGKILL, signal.SIGINT, signal.SIGKILL]):
        checkpoint = str(tmp_path / f"ckpt{attempt}")
        interrupt([sys.executable, str(script), checkpoint], checkpoint, sig, rng)
        resumed = amp_mlir.Session(LINEAR, seed=0)
        resumed.load(checkpoint)
        done = resumed.steps_done
        assert done > 0 and done % SAVE_EVERY == 0 and resumed.seed == 7
        losses = [r.loss for r in resumed.fit(x, y, steps=5)]
        full = amp_mlir.Session(LINEAR, seed=7)
        expected = [r.loss for r in full.fit(x, y, steps=done + 5)][-5:]
        assert losses == expected
        for name, value in full.state_dict()["state"].items():
            assert resumed.state_dict()["state"][name].tobytes() == value.tobytes(), name


def test_session_and_amp_run_checkpoints_are_one_format(data, tmp_path):
    """A Session continues an amp-run checkpoint, and amp-run a Session's, bit for bit."""
    x, y = np.load(data[0]), np.load(data[1])
    amp_run(data, "--steps", "6", "--save-state", str(tmp_path / "run"))
    s = amp_mlir.Session(LINEAR)
    s.load(tmp_path / "run")
    assert (s.steps_done, s.seed) == (6, 7)
    s.fit(x, y, steps=3)
    s.save(tmp_path / "session")
    amp_run(data, "--steps", "9", "--save-state", str(tmp_path / "full"))
    assert files(tmp_path / "session") == files(tmp_path / "full")


def test_save_every_writes_every_k_steps_and_at_the_end(data, tmp_path):
    s = amp_mlir.Session(LINEAR, seed=7)
    x, y = np.load(data[0]), np.load(data[1])
    s.fit(x, y, steps=10, save_every=4, save_to=tmp_path / "ckpt")
    assert steps_done(tmp_path / "ckpt") == 10
    assert not os.path.exists(str(tmp_path / "ckpt") + ".partial")
    with pytest.raises(ValueError, match="save_every"):
        s.fit(x, y, steps=1, save_every=0, save_to=tmp_path / "ckpt")
    with pytest.raises(ValueError, match="save_every"):
        s.fit(x, y, steps=1, save_every=2)


def test_a_checkpoint_never_replaces_other_files(data, tmp_path):
    """The directory is replaced as a whole: one holding anything but .npy files is
    refused, by amp-run and Session.save, and left as it was."""
    (tmp_path / "notes.txt").write_text("keep me")
    run = subprocess.run([AMP_RUN, LINEAR, "--data", ",".join(data), "--steps", "2",
                          "--save-state", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "holds" in run.stderr and "notes.txt" in run.stderr and "amp-run: error" in run.stderr
    with pytest.raises(ValueError, match="notes.txt, which is not a checkpoint file"):
        amp_mlir.Session(LINEAR).save(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    run = subprocess.run([AMP_RUN, LINEAR, "--data", ",".join(data), "--steps", "2",
                          "--save-every", "2"], capture_output=True, text=True)
    assert run.returncode == 1 and "--save-every N takes N >= 0 and needs --save-state" in run.stderr


def test_a_bad_checkpoint_leaves_the_session_as_it_was(data, tmp_path):
    s = amp_mlir.Session(LINEAR, seed=7)
    s.save(tmp_path / "ckpt")
    before = {k: v.tobytes() for k, v in s.state_dict()["state"].items()}
    np.save(tmp_path / "ckpt" / "arg1.npy", np.zeros((3,), np.float32))  # a wrong shape
    with pytest.raises(ValueError, match=r"arg1.npy: argument 'arg1' \(#1\) of @step is"):
        s.load(tmp_path / "ckpt")
    s.save(tmp_path / "other")
    os.remove(tmp_path / "other" / "step.npy")
    with pytest.raises(ValueError, match="step.npy: cannot read"):
        s.load(tmp_path / "other")
    assert {k: v.tobytes() for k, v in s.state_dict()["state"].items()} == before
