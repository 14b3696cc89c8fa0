"""Read and write TREC runs and qrels, parquet and other tables.

TREC run files hold six whitespace-separated fields per line, ``query Q0 doc rank score
system``; qrels files four, ``query iteration doc relevance``. Fields may be separated by
tabs or runs of spaces, lines may carry leading or trailing whitespace (and ``\\r\\n``
endings), files may be gzipped (recognised by their content, whatever their name), and
blank lines are skipped. Ids stay strings: trec_eval compares them as strings.

One module per kind of source or job:

- :mod:`lexiframe.io.runs` and :mod:`lexiframe.io.qrels`: the public readers;
- :mod:`lexiframe.io.sources`: which reader reads which file, all at once or group by
  group; :mod:`lexiframe.io.files`: finding the files;
- :mod:`lexiframe.io.trec`: TREC text files (how they are read fast is told there);
- :mod:`lexiframe.io.gzipped`: gzip detection and decompression;
- :mod:`lexiframe.io.parquet`: parquet files;
- :mod:`lexiframe.io.layouts`: the columns of runs and qrels and the fields of their files;
- :mod:`lexiframe.io.writers`: tables and TREC files, written atomically;
- :mod:`lexiframe.io.outputs`: several outputs checked first and written all or nothing;
- :mod:`lexiframe.io.objects`: runs and qrels from objects users hold (ranx, ir_measures,
  PyTerrier, dict-of-dicts).
"""

from __future__ import annotations

from lexiframe.io.files import PathLike, Paths
from lexiframe.io.layouts import QRELS_SCHEMA, RUN_SCHEMA
from lexiframe.io.objects import as_qrels, as_run
from lexiframe.io.outputs import Outputs, check_output_path
from lexiframe.io.qrels import concat_qrels, read_qrels, scan_qrels
from lexiframe.io.runs import read_run, read_run_batches, scan_run
from lexiframe.io.writers import (
    WRITE_FORMATS,
    check_writable,
    write_frame,
    write_frame_as,
    write_trec_qrels,
    write_trec_run,
)

__all__ = [
    "QRELS_SCHEMA",
    "RUN_SCHEMA",
    "WRITE_FORMATS",
    "Outputs",
    "PathLike",
    "Paths",
    "as_qrels",
    "as_run",
    "check_output_path",
    "check_writable",
    "concat_qrels",
    "read_qrels",
    "read_run",
    "read_run_batches",
    "scan_qrels",
    "scan_run",
    "write_frame",
    "write_frame_as",
    "write_trec_qrels",
    "write_trec_run",
]
