"""What the benchmark scripts share: the machine line and Markdown tables."""
import os
import platform
import shutil
import subprocess
import time


def machine():
    """CPU model, cores and load at the time of the run: the figures depend on them."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"machine: {model}, {os.cpu_count()} cores, load average {load} (1, 5, 15 min)"


def revision():
    """The source tree's commit, '-dirty' with uncommitted changes (the build may hold them)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"],
                            capture_output=True, text=True)
    return result.stdout.strip() or "unknown"


def table(headers, rows):
    """A Markdown table, columns padded."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
                     + [line(r) for r in cells])


def pinned_tool(path, workdir, tries=6):
    """A copy of the tool at `path` in `workdir`, so that a rebuild during the run (other
    work on a shared machine) neither fails the run nor changes what is measured. A copy
    taken while the tool was being linked fails `--version`; it is taken again."""
    copy = os.path.join(workdir, os.path.basename(path))
    for _ in range(tries):
        try:
            shutil.copy2(path, copy)
            if subprocess.run([copy, "--version"], capture_output=True).returncode == 0:
                return copy
        except OSError:
            pass
        time.sleep(10)
    raise SystemExit(f"could not take a working copy of {path}: is it being rebuilt?")
