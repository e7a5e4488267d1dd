"""The CLI against hostile and careless input (issue #9): one line, exit 2, no traceback.

Every case drives ``roofline.cli.main`` the way a shell would and checks what a user
sees: the exit status, exactly one ``error:`` line on stderr that names the input, no
"Traceback", and no terminal control character anywhere in the output.
"""

from __future__ import annotations

import csv
import dataclasses
import errno
import io
import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import roofline.cli as cli
import roofline.cli.rows as cli_rows
import roofline.cli.specs as cli_specs
from roofline import ShapeError, evaluate
from roofline.errors import printable, spreadsheet_safe
from roofline.specs import SpecDatabase, load_specs

ROOT = Path(__file__).resolve().parent.parent
EVAL = ["eval", "--gpu", "NVIDIA H100", "--recipe", "rowwise"]
# C0 controls but tab and newline, DEL, C1: what may never reach a terminal.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
RULE = "must be a positive integer up to 2147483647 (int32, the limit of GEMM libraries)"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert CONTROL.search(out + err) is None, repr(out + err)
    return code, out, err


def one_error(capsys, *argv: str) -> str:
    """Run; assert exit 2, nothing on stdout and exactly one ``error:`` line; return it."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


# -- shapes on the command line -------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "got"),
    [
        ("1" + "0" * 30 + ",1,1", "M " + RULE + ", got '1" + "0" * 30 + "'"),
        ("9223372036854775807,1,1", "M " + RULE + ", got '9223372036854775807'"),  # 2**63 - 1
        ("18446744073709551616,1,1", "got '18446744073709551616'"),  # 2**64
        ("1,2147483648,1", "K " + RULE + ", got '2147483648'"),  # 2**31
        ("1,1,0", "N " + RULE + ", got '0'"),
        ("1e30,1,1", "got '1e30'"),
        ("1.5,1,1", "got '1.5'"),
        ("1024.0,1,1", "got '1024.0'"),
        ("nan,1,1", "got 'nan'"),
        ("inf,1,1", "got 'inf'"),
        (" ,1,1", "got ''"),
        ("+5,1,1", "got '+5'"),
        ("1_000,1,1", "got '1_000'"),
        ("١٢,1,1", "got '١٢'"),  # Arabic-Indic digits: int() takes them, a GEMM does not
        ("0x10,1,1", "expected M,K,N"),
        ("1,2", "expected M,K,N"),
        ("1,2,3,4", "expected M,K,N"),
        ("", "expected M,K,N"),
        ("\x1b[2J,1,1", "got '\\x1b[2J'"),
    ],
)
def test_bad_dimensions_name_the_shape_and_the_column(capsys, shape, got):
    err = one_error(capsys, *EVAL, f"--shape={shape}")
    assert err.startswith(f"error: shape {printable(repr(shape))}: ") and got in err


def test_a_negative_dimension_is_refused_either_way(capsys):
    assert "M " + RULE + ", got '-1'" in one_error(capsys, *EVAL, "--shape=-1,1,1")
    err = one_error(capsys, *EVAL, "--shape", "-1,1,1")  # argparse reads it as an option
    assert "argument --shape: expected one argument" in err and "roofline eval --help" in err


def test_a_100k_digit_dimension_gives_a_short_line(capsys):
    err = one_error(capsys, *EVAL, "--shape", "9" * 100_000 + ",1,1")
    assert len(err) < 300


def test_the_int32_limit_itself_is_evaluated(capsys):
    code, out, _ = run(capsys, *EVAL, "--shape", "2147483647,1,2147483647", "--format", "json")
    row = json.loads(out)[0]
    assert code == 0 and row["fwd_M"] == row["fwd_N"] == 2**31 - 1 and row["r_bf16_gemm_s"] > 0


# -- the Python API: the same rule ------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        2**31,
        10**30,
        -(10**30),
        2**63 - 1,
        np.uint64(2**64 - 1),
        [1, 2**40],
        float(2**31),
        np.inf,
        -np.inf,
        np.nan,
        0.5,
        True,
        None,
        "12",
        [[1, 2], [3]],
        1 + 2j,
        [],
        np.int8(-1),
    ],
)
def test_evaluate_refuses_what_the_cli_refuses(bad):
    if isinstance(bad, list) and not bad:
        out = evaluate("NVIDIA H100", "training", "rowwise", 1024, bad, 1024)  # no shapes
        assert out["r_bf16_gemm_s"].shape == (0,)
        return
    with pytest.raises(ShapeError, match=r"shape dimension K must be a positive integer up to"):
        evaluate("NVIDIA H100", "training", "rowwise", 1024, bad, 1024)


def test_evaluate_accepts_the_limit_and_reports_shapes_that_do_not_broadcast():
    out = evaluate("NVIDIA H100", "training", "rowwise", [1, 2**31 - 1], 2**31 - 1, 1.0)
    assert out["fwd_M"].tolist() == [1, 2**31 - 1]
    with pytest.raises(ShapeError, match="do not broadcast together"):
        evaluate("NVIDIA H100", "training", "rowwise", [1, 2], [1, 2, 3], 1)


# -- shapes files -----------------------------------------------------------------------


def write(tmp_path: Path, content: bytes, name: str = "s.csv") -> str:
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a UTF-8 text CSV file (byte 0 on line 1"),
        (b"\x7fELF\x02\x01\x01\x00", "not a UTF-8 text CSV file (byte 7 on line 1 is a NUL)"),
        ("M,K,N\n1,2,3\n".encode("utf-16"), "a UTF-16 byte-order mark"),
        (b"M,K,N\n1,2,3\n4,5,\xff\n", "(byte 16 on line 3 is 0xff)"),
        (b"", "line 1: expected a header with columns M,K,N (optional name), got nothing"),
        (b"\xef\xbb\xbf", "got nothing"),
        (b"M,K,N\n", "expected at least one shape row after the header"),
        (b"\xef\xbb\xbfM,K,N\r\n", "expected at least one shape row after the header"),
        (b"m,k,n\n1,2,3\n", "line 1: expected a header with columns M,K,N (optional name), got m"),
        (b"\xef\xbb\xbf\xef\xbb\xbfM,K,N\n1,2,3\n", "got \\ufeffM,K,N"),  # a second BOM shows
        (b"M\x1b[2J,K,N\n1,2,3\n", "got M\\x1b[2J,K,N"),
        (b"M,K,N\n1,2,99999999999999999999999\n", "line 2: column N " + RULE),
        (b"M,K,N\n1,-2,3\n", "line 2: column K " + RULE + ", got '-2'"),
        (b"M,K,N\n1,2.5,3\n", "line 2: column K " + RULE + ", got '2.5'"),
        (b"M,K,N\n1,2,3\n\n4,,6\n", "line 4: column K " + RULE + ", got ''"),
        (b"M,K,N\r\n1,2,3\r\n4,5,x\r\n", "line 3: column N"),
        (b"M,K,N\n1,2,3\n" + b"7" * (3 << 20) + b"\n", "line 3 is longer than 1048576 bytes"),
    ],
)
def test_bad_shapes_files_give_one_line_naming_the_file(capsys, tmp_path, content, message):
    path = write(tmp_path, content)
    err = one_error(capsys, *EVAL, "--shapes-file", path)
    assert err.startswith(f"error: {path}") and message in err


@pytest.mark.parametrize("kind", ["missing", "folder", "file as folder", "empty name"])
def test_shapes_paths_that_are_not_files(capsys, tmp_path, kind):
    (tmp_path / "plain").write_text("M,K,N\n1,1,1\n")
    path = {
        "missing": str(tmp_path / "nope.csv"),
        "folder": str(tmp_path),
        "empty name": "",
        "file as folder": str(tmp_path / "plain" / "s.csv"),
    }[kind]
    err = one_error(capsys, *EVAL, "--shapes-file", path)
    assert err.startswith(f"error: cannot read shapes file {path!r}: ")


def test_a_spreadsheet_csv_with_bom_and_crlf_is_read(capsys, tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbfM,K,N,name\r\n1024,2048,4096,wq\r\n8,8,8,\r\n")
    code, out, err = run(capsys, *EVAL, "--shapes-file", path, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and err == ""
    assert [(r["name"], r["fwd_K"]) for r in rows] == [("wq", "2048"), ("", "8")]


def test_formula_names_are_neutralised_in_csv_but_kept_in_json(capsys, tmp_path):
    names = ["=cmd|' /C calc'!A0", "+1+1", "-2", "@SUM(A1)", '=HYPERLINK("http://x")', "ok"]
    text = "M,K,N,name\n" + "".join(f'1,1,1,"{n.replace(chr(34), 2 * chr(34))}"\n' for n in names)
    path = write(tmp_path, text.encode())
    _, out, _ = run(capsys, *EVAL, "--shapes-file", path, "--format", "csv")
    cells = [r["name"] for r in csv.DictReader(io.StringIO(out))]
    assert cells == [spreadsheet_safe(n) for n in names] and cells[0] == "'" + names[0]
    assert all(not c.startswith(("=", "+", "-", "@")) for c in cells)
    target = tmp_path / "out.csv"
    run(capsys, *EVAL, "--shapes-file", path, "--format", "csv", "-o", str(target))
    assert target.read_text() == out  # the file gets the same cells
    _, out, _ = run(capsys, *EVAL, "--shapes-file", path, "--format", "json")
    assert [r["name"] for r in json.loads(out)] == names


def test_control_characters_in_names_reach_the_terminal_escaped(capsys, tmp_path):
    path = write(tmp_path, b"M,K,N,name\n1,1,1,\x1b]0;pwned\x07 \xc2\x9b31m\xe2\x80\xae\n")
    for fmt in ("table", "csv", "json"):
        code, out, _ = run(capsys, *EVAL, "--shapes-file", path, "--format", fmt)
        assert code == 0 and ("\\x1b]0;pwned\\x07" in out or "\\u001b]0;pwned\\u0007" in out)


# -- -o / --output ----------------------------------------------------------------------


def output_cases(tmp_path: Path) -> dict[str, tuple[str, str]]:
    (tmp_path / "folder").mkdir()
    (tmp_path / "plain").write_text("x")
    return {
        "a folder": (str(tmp_path / "folder"), "names a folder; give a file name in it"),
        "a folder path": (str(tmp_path / "new") + "/", "names a folder"),
        "a path through a file": (
            str(tmp_path / "plain" / "out.csv"),
            "a part of the path is a file, not a folder",
        ),
        "a missing folder under a file": (
            str(tmp_path / "plain" / "sub" / "out.csv"),
            "a part of the path is a file, not a folder",
        ),
    }


COMMANDS = {
    "eval": [*EVAL, "--shape", "1,1,1"],
    "diff": ["diff", "tests/data/seed_specs.toml", "roofline/data/gpus.toml"],
}
CASES = ["a folder", "a folder path", "a path through a file", "a missing folder under a file"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", CASES)
def test_unwritable_outputs_give_one_line_naming_the_path(capsys, tmp_path, command, case):
    target, message = output_cases(tmp_path)[case]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    err = one_error(capsys, *COMMANDS[command], "-o", target)
    assert repr(target) in err and message in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing left behind


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_read_only_folder(capsys, tmp_path, command):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: permissions do not stop writes")
        err = one_error(capsys, *COMMANDS[command], "-o", str(folder / "out.csv"))
        assert "Permission denied" in err and "out.csv" in err
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_location_nobody_can_write(capsys, command):
    # /proc refuses new files even to root (a read-only folder test that root cannot skip).
    err = one_error(capsys, *COMMANDS[command], "-o", "/proc/roofline-test/out.csv")
    assert "cannot write output file '/proc/roofline-test/out.csv'" in err


def test_a_missing_parent_folder_is_created(capsys, tmp_path):
    target = tmp_path / "new" / "deeper" / "out.json"
    assert run(capsys, *COMMANDS["eval"], "--format", "json", "-o", str(target))[0] == 0
    assert json.loads(target.read_text())[0]["fwd_M"] == 1


def test_an_empty_output_name(capsys):
    assert "output '' is empty" in one_error(capsys, *COMMANDS["eval"], "-o", "")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_written_in_place_not_replaced(capsys, tmp_path):
    """-o /dev/stdout, /dev/null or a FIFO: a rename would replace the node itself."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, _ = run(capsys, *COMMANDS["eval"], "--format", "csv", "-o", str(link))
    reader.join(timeout=60)
    assert code == 0 and received[0].startswith(b"fwd_M,")
    assert stat.S_ISFIFO(fifo.stat().st_mode) and link.is_symlink()


def test_a_symlink_keeps_pointing_at_the_new_file(capsys, tmp_path):
    target, link = tmp_path / "real.csv", tmp_path / "link.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    link.symlink_to(target.name)
    assert run(capsys, *COMMANDS["eval"], "--format", "csv", "-o", str(link))[0] == 0
    assert link.is_symlink() and target.read_text().startswith("fwd_M,")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file's mode, not mkstemp's 0600


def test_a_new_output_gets_the_usual_mode(capsys, tmp_path):
    target = tmp_path / "out.csv"
    umask = os.umask(0o022)
    try:
        assert run(capsys, *COMMANDS["eval"], "-o", str(target))[0] == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_old_file_and_no_temporary(capsys, tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_text("previous result\n")
    calls = []

    def disk_full(chunk, header):
        calls.append(1)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return "1,2,3\n"

    monkeypatch.setattr(cli_rows, "CHUNK_ROWS", 2)
    monkeypatch.setattr(cli_rows, "_csv_text", disk_full)
    err = one_error(capsys, *EVAL, "--shape-gen", "llama", "--format", "csv", "-o", str(target))
    assert f"cannot write output file {str(target)!r}: No space left on device" in err
    assert target.read_text() == "previous result\n" and os.listdir(tmp_path) == ["out.csv"]


def test_a_bad_shape_after_the_first_chunk_writes_nothing_to_stdout(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(cli_rows, "CHUNK_ROWS", 2)
    path = write(tmp_path, b"M,K,N\n128,128,128\n128,128,128\n128,128,128\n128,100,128\n")
    err = one_error(
        capsys, "eval", "--gpu", "NVIDIA H100", "--recipe", "blockwise", "--shapes-file", path
    )
    assert "multiple of 128; got K=100" in err


# -- terminal control characters -----------------------------------------------------


def test_printable_escapes_controls_and_keeps_text():
    assert printable("a\x1b]0;pwned\x07b") == "a\\x1b]0;pwned\\x07b"
    assert printable("\r\x00\x7f\x85\x9b") == "\\x0d\\x00\\x7f\\x85\\x9b"
    assert printable("\u202eexe.gnp \u2066x\u2069 \ufeff\u2028") == (
        "\\u202eexe.gnp \\u2066x\\u2069 \\ufeff\\u2028"
    )
    kept = "tab\tand\nnewline, naïve, 日本, 👩\u200d💻, ∑"
    assert printable(kept) is kept


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b31m\r\u202e"


def hostile_specs() -> SpecDatabase:
    """The bundled database plus a GPU whose text is hostile, built without the lint (which
    refuses such text): the printing boundary must hold on its own."""
    specs = load_specs()
    gpu = dataclasses.replace(
        specs["NVIDIA H100"],
        name="H100" + HOSTILE,
        notes=HOSTILE,
        derivation=HOSTILE,
        device_prefixes=(),
    )
    return SpecDatabase({**specs, gpu.name: gpu}, specs.origin)


def test_specs_show_prints_hostile_notes_harmlessly(capsys, monkeypatch):
    monkeypatch.setattr(cli_specs, "resolve_specs", lambda path: hostile_specs())
    code, out, _ = run(capsys, "specs", "show", "H100" + HOSTILE)
    escaped = "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x0d\\u202e"
    assert code == 0 and f"notes: {escaped}" in out and out.startswith(f"H100{escaped}")


def test_specs_list_prints_hostile_names_harmlessly(capsys, monkeypatch):
    monkeypatch.setattr(cli_specs, "load_specs", lambda path, max_gpus=None: hostile_specs())
    code, out, _ = run(capsys, "specs", "list")
    assert code == 0 and out.count("H100\\x1b]0;pwned\\x07") == 2  # the table, the matrix


@pytest.mark.parametrize(
    "argv",
    [
        [*EVAL[:1], "--gpu", "\x1b]0;pwned\x07H100", *EVAL[3:], "--shape", "1,1,1"],
        ["specs", "show", "\x1b[2J\x9bH100"],
        ["latex", "--gpu", "\x1b[31m", "--recipe", "rowwise"],
        ["eval", "--gpu", "NVIDIA H100", "--recipe", "\x1b[31mrowwise", "--shape", "1,1,1"],
        ["eval", *EVAL[1:], "--mode", "\x07training", "--shape", "1,1,1"],
        ["\x1b]0;pwned\x07"],
        ["eval", "--format", "\x1b[2J", *EVAL[1:], "--shape", "1,1,1"],
        ["specs", "check", "/nonexistent/\x1b[2J.toml"],
    ],
)
def test_hostile_names_in_arguments_print_escaped(capsys, argv):
    err = one_error(capsys, *argv)
    assert "\\x1b" in err or "\\x07" in err or "\\x9b" in err


# -- main(): OSError, UnicodeDecodeError, Ctrl-C, bugs ------------------------------------


def test_os_errors_are_one_line_naming_the_path(capsys, monkeypatch):
    def denied(args):
        raise PermissionError(errno.EACCES, "Permission denied", "/srv/x.toml")

    monkeypatch.setattr(cli, "cmd_recipes", denied)
    assert one_error(capsys, "recipes") == "error: '/srv/x.toml': Permission denied\n"


def test_a_decode_error_names_the_files_given(capsys, monkeypatch, tmp_path):
    def garbled(path):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr(cli_rows, "read_shapes_file", garbled)
    err = one_error(capsys, *EVAL, "--shapes-file", "x.csv")
    assert err == "error: 'x.csv': not UTF-8 text (byte 0: invalid start byte)\n"


def test_ctrl_c_exits_130_with_a_short_message(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_recipes", interrupted)
    code, out, err = run(capsys, "recipes")
    assert (code, out, err) == (130, "", "interrupted\n")


def test_a_programming_error_is_not_swallowed(capsys, monkeypatch):
    def bug(args):
        return 1 / 0

    monkeypatch.setattr(cli, "cmd_recipes", bug)
    with pytest.raises(ZeroDivisionError):
        cli.main(["recipes"])


def test_streams_are_restored_after_main(capsys):
    before = sys.stdout, sys.stderr
    cli.main(["recipes"])
    assert (sys.stdout, sys.stderr) == before


# -- large outputs: worker processes give the same bytes ------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork")
@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_parallel_formatting_gives_the_same_bytes(capsys, tmp_path, monkeypatch, fmt):
    rows = "".join(
        f"{i % 97 + 1},{i % 13 + 1},{i + 1},{f'n{i}' if i % 9 else ''}\n" for i in range(500)
    )
    path = write(tmp_path, ("M,K,N,name\n" + rows).encode())
    argv = [*EVAL, "--shapes-file", path, "--format", fmt]
    monkeypatch.setattr(cli_rows, "CHUNK_ROWS", 37)
    monkeypatch.setattr(cli_rows, "PARALLEL_MIN_ROWS", 10**9)
    _, single, _ = run(capsys, *argv)
    monkeypatch.setattr(cli_rows, "PARALLEL_MIN_ROWS", 100)
    monkeypatch.setattr(cli_rows, "_worker_count", lambda rows: 2)
    _, parallel, _ = run(capsys, *argv)
    assert parallel == single and single.count("n499") == 1


# -- a real process ---------------------------------------------------------------------


def roofline(*argv: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "roofline.cli", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        **kwargs,
    )


def test_a_real_process_prints_one_line_and_no_traceback(tmp_path):
    binary = write(tmp_path, b"\x00\x01\x02\x1b[2J\xff" * 100, "bin.csv")
    for argv in (
        [*EVAL, "--shape", "1000000000000000000000000000000,1,1"],
        [*EVAL, "--shapes-file", binary],
        [*EVAL, "--shape", "1,1,1", "-o", str(tmp_path)],
    ):
        proc = roofline(*argv)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")
        assert "Traceback" not in proc.stderr and CONTROL.search(proc.stderr) is None


def test_a_closed_pipe_ends_quietly(tmp_path):
    path = write(tmp_path, ("M,K,N\n" + "1024,1024,1024\n" * 20_000).encode())
    proc = subprocess.Popen(
        [sys.executable, "-m", "roofline.cli", *EVAL, "--shapes-file", path],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline().split()[0] == b"fwd_M"
    proc.stdout.close()  # like `| head -1`
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and stderr == ""
