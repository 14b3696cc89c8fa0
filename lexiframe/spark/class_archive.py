"""The class-data archive of the command's local sessions: the classes a local session's
JVM loads, mapped from one file of the user's cache instead of read, parsed and verified
from Spark's jars at every start (HotSpot's dynamic class-data sharing, JEP 350, Java 13
and later).

The second local session of a given Java, PySpark and Spark configuration folder writes
the archive as its JVM exits (about 170 MB, in ``$XDG_CACHE_HOME/lexiframe``, else
``~/.cache/lexiframe``), which takes that command some 20 s more; every later one maps
it, which takes about a third off the demo track's command (docs: Scaling out). The first
only leaves a mark, so that a command run once pays nothing. The JVM checks an archive
against its own build and class path and starts without one that does not match, so a
stale archive costs nothing; the folder may be deleted at any time. The archive is
written under a name of its own process and renamed into place only once the JVM has
exited cleanly, so that a session never maps a partial file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

DUMP_OPTION = "-XX:ArchiveClassesAtExit="
"""The JVM option that writes the classes it loaded to an archive as it exits."""

MAP_OPTION = "-XX:SharedArchiveFile="
"""The JVM option that maps an archive at its start."""

QUIET_OPTIONS = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
"""The archive's own log lines (classes of signed jars it skips) are not Spark's output."""

EXIT_SECONDS = 120
"""How long the JVM may take to exit (writing its archive) before the archive is given up."""

STALE_SECONDS = 24 * 3600
"""A half-written archive this old was left by a process that was killed: it is removed."""


def folder() -> Path:
    """Where the archives are kept: ``$XDG_CACHE_HOME/lexiframe``, else
    ``~/.cache/lexiframe``.

    Example:
        >>> folder().name
        'lexiframe'
    """
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "lexiframe"


def _java() -> str | None:
    """The java that Spark's launcher runs: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.isfile(found) else None


def archive_path() -> Path | None:
    """The archive of this Java, this PySpark and this Spark configuration folder (named by
    them, so that an upgrade makes a new one, and a configuration folder, which is on the
    JVM's class path, has its own), or None without a java to name it by."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = os.path.dirname(pyspark.__file__)
    conf = os.environ.get("SPARK_CONF_DIR", "")
    stamp = "\0".join([java, str(os.stat(java).st_mtime_ns), pyspark.__version__, jars, conf])
    return folder() / f"spark-classes-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}.jsa"


def java_options() -> list[str]:
    """The driver JVM's options for the archive: map it when it exists; else, from the
    second local session on, write it as the JVM exits (:func:`keep` renames it into
    place); none at the first (which only leaves a mark: a command run once, as in a
    fresh CI machine, does not pay for an archive it will not use), nor where no archive
    can be kept (no java found, a cache folder that cannot be made, a path with spaces,
    which Spark would split).
    """
    path = archive_path()
    if path is None or any(char.isspace() for char in str(path)):
        return []
    if path.is_file():
        return [f"{MAP_OPTION}{path}", *QUIET_OPTIONS]
    seen = path.with_name(f"{path.name}.seen")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not seen.exists():  # a first session: a command never repeated pays nothing
            seen.touch()
            return []
    except OSError:
        return []
    _remove_stale(path.parent)
    return [f"{DUMP_OPTION}{path}.{os.getpid()}.tmp", *QUIET_OPTIONS]


def _remove_stale(where: Path) -> None:
    for leftover in where.glob("*.tmp"):
        try:
            if time.time() - leftover.stat().st_mtime > STALE_SECONDS:
                leftover.unlink()
        except OSError:
            pass


def keep(spark: Any, options: str) -> None:
    """After the session stopped: when its JVM was started with ``options`` that write an
    archive, end the JVM (its gateway closed, as at the Python process's exit), wait for
    it to write the archive and rename the archive into place; a JVM that does not exit
    cleanly leaves no archive."""
    dump = next((item for item in options.split() if item.startswith(DUMP_OPTION)), None)
    gateway = getattr(spark.sparkContext, "_gateway", None)
    process = getattr(gateway, "proc", None)
    if dump is None or gateway is None or process is None:
        return
    written = Path(dump[len(DUMP_OPTION) :])
    print(
        f"note: keeping the classes Spark loaded for quicker local starts, in {written.parent} "
        "(once per Java and PySpark)",
        file=sys.stderr,
    )
    try:
        gateway.shutdown()
        if process.stdin is not None:
            process.stdin.close()  # the gateway's JVM exits when its stdin ends
        status = process.wait(EXIT_SECONDS)
    except Exception:  # a JVM that will not end keeps its half-written file apart
        process.kill()
        status = None
    if status == 0 and written.is_file():
        os.replace(written, written.with_name(written.name.rsplit(".", 2)[0]))
    else:
        written.unlink(missing_ok=True)
