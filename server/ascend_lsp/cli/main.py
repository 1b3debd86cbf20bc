"""`lsp-check`: the rules headless. Exit 0 clean, 1 findings, 2 usage/config/internal error."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from .. import __version__
from ..engine.config import TARGETS, ConfigError, check_codes, check_env_docs_url
from ..engine.model import FIX_STYLES
from ..settings_lookup import SettingsResolver
from ..knowledge.chips import chip_argument
from ..knowledge.files import TableError
from ..safe_write import WriteRefused, write_file

SUBCOMMANDS = ("check", "report", "rules", "explain", "run", "compare-dumps", "port", "convert-weights")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_STATUS = "Exit status: 0 clean, 1 findings, 2 usage, configuration or internal error."


def add_common_options(p: argparse.ArgumentParser) -> None:
    """What selects the files and the rules: shared by `check` and `report`."""
    p.add_argument("paths", nargs="*", help="files, folders or globs (default: ., except under pre-commit)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--config", type=Path, help="pyproject.toml to use instead of the nearest one")
    p.add_argument("--target", choices=TARGETS)
    p.add_argument("--chip", type=chip_argument, metavar="CHIP", help="the Ascend chip (the `chip` setting)")
    p.add_argument("--torch-npu-version")
    p.add_argument("--mindspore-version")
    p.add_argument("--select", help="comma-separated codes or prefixes to enable (replaces the configured set)")
    p.add_argument("--extend-select", help="comma-separated codes or prefixes to enable in addition")
    p.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    p.add_argument("--force-exclude", action="store_true",
                   help="apply `exclude` to files named on the command line too (for pre-commit)")
    p.add_argument("--no-cache", action="store_true", help="re-check files that did not change")
    p.add_argument("-j", "--jobs", type=int, default=None, help="parallel workers (default: one per core)")
    p.add_argument("-q", "--quiet", action="store_true", help="print findings only: no summary, no progress bar")


def check_parser() -> argparse.ArgumentParser:
    from .output import FORMATS

    p = argparse.ArgumentParser(
        prog="lsp-check",
        description="Find what keeps PyTorch CUDA code from running on Ascend NPUs (torch_npu) or MindSpore.",
        epilog="Other commands: lsp-check report PATH... -o report.html | rules | explain CODE|API | "
               "run FILE::FUNC [--layers] | compare-dumps BENCH NPU. " + EXIT_STATUS,
    )
    add_common_options(p)
    p.add_argument("--output-format", choices=FORMATS, default="full")
    p.add_argument("-o", "--output-file", help="write the findings here instead of stdout")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that need review (with --fix/--diff)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    p.add_argument("--fix-style", choices=FIX_STYLES,
                   help="what fixes write: torch_npu's names (npu, the default) or torch.accelerator's, which run on "
                        "CUDA, the NPU and the CPU alike (portable; the `fix-style` setting)")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
    adopt = p.add_argument_group("adopting on an existing codebase")
    adopt.add_argument("--baseline", type=Path, metavar="FILE",
                       help="report only findings that FILE (from --write-baseline) does not list")
    adopt.add_argument("--write-baseline", type=Path, metavar="FILE",
                       help="record the current findings in FILE and exit 0; rewriting it drops fixed ones")
    adopt.add_argument("--add-noqa", action="store_true",
                       help="suppress each current finding with a `# noqa: CODE` comment on its line")
    p.add_argument("--version", action="version", version=f"lsp-check {__version__}")
    return p


def report_parser() -> argparse.ArgumentParser:
    from .report import REPORT_FORMATS

    p = argparse.ArgumentParser(
        prog="lsp-check report",
        description="The size of the migration, per file and in total: API references, supported as-is, "
                    "auto-fixable, manual, unsupported, unknown, an effort bucket per file, the top rules "
                    "and unsupported APIs.",
        epilog="The format defaults to the output file's suffix (.html, .md, .csv, .json), else md. " + EXIT_STATUS,
    )
    add_common_options(p)
    p.add_argument("--format", choices=REPORT_FORMATS, help="html (one self-contained file), md, csv or json")
    p.add_argument("-o", "--output-file", help="write the report here instead of stdout")
    return p


def overrides(args: argparse.Namespace, codes: frozenset[str]) -> dict:
    """The command line's settings (its codes checked here, to name the option they came from)."""
    out = {}
    for key in ("target", "chip", "torch_npu_version", "mindspore_version", "fix_style"):
        if getattr(args, key, None):
            out[key] = getattr(args, key)
    for key in ("select", "extend_select", "ignore"):
        if getattr(args, key):
            listed = tuple(c.strip() for c in getattr(args, key).split(",") if c.strip())
            out[key] = check_codes("--" + key.replace("_", "-"), listed, codes)
    return out


def default_paths(paths: list[str]) -> list[str]:
    """No path means the current folder, except in a pre-commit hook: there it means no
    file matched (an `always_run` hook), and scanning the whole repository would gate
    every commit on every file."""
    if paths:
        return paths
    return [] if os.environ.get("PRE_COMMIT") == "1" else ["."]


def check_paths(args: argparse.Namespace, options, show_progress: bool):
    """Discover and check the files `args` name: (results, settings resolver, base settings)."""
    from .check import Cache, FileResult, run_checks
    from ..discovery import checked_trees, discover
    from .progress import Progress
    from ..rules import RULE_SET

    resolver = SettingsResolver(RULE_SET.prefixes, overrides(args, RULE_SET.prefixes), args.config)
    resolve = resolver.for_path
    first = args.paths[0] if args.paths else "."
    base = resolver.settings(os.path.abspath(first)) if os.path.isdir(first) else resolve(first)  # a folder's own
    unreadable: list[tuple[str, str]] = []
    paths = default_paths(args.paths)
    files = discover(paths, resolve, force_exclude=args.force_exclude, unreadable=unreadable)
    options = replace(options, trees=checked_trees(paths))
    items = [(path, resolve(path)) for path in files]
    root = Path(base.root) if base.root else Path.cwd()
    cache = None if args.no_cache else Cache(root)
    progress = Progress(len(items)) if show_progress else None
    try:
        results = run_checks(items, options, cache, args.jobs, progress)
    finally:
        if progress is not None:
            progress.close()
    return results + [FileResult(folder, error=why) for folder, why in unreadable], resolve, base


def report_problems(results) -> int:
    """Print what kept files from being checked (or written); returns how many."""
    problems = 0
    for result in results:
        if result.error:
            problems += 1
            print(f"error: {result.path}: {result.error}", file=sys.stderr)
        if result.skipped_write:
            problems += 1
            print(f"error: {result.path}: {result.skipped_write}", file=sys.stderr)
        for message in result.rule_errors:
            problems += 1
            summary, _, trace = message.partition("\n")
            print(f"error: {result.path}: {summary}; its findings are missing from this run. This is a bug in "
                  f"ascend-lsp: please report it with this traceback:\n{trace}", file=sys.stderr)
    return problems


def run_check(argv: list[str]) -> int:
    from . import output
    from .baseline import Baseline, write_baseline
    from .check import Options
    from .progress import wanted

    parser = check_parser()
    args = parser.parse_args(argv)
    if args.add_noqa and (args.fix or args.diff):
        parser.error("--add-noqa cannot be combined with --fix or --diff")
    if args.baseline and args.write_baseline:
        parser.error("use either --baseline or --write-baseline")
    if args.unsafe_fixes and not (args.fix or args.diff):
        print("warning: --unsafe-fixes has no effect without --fix or --diff", file=sys.stderr)
    check_output_file(args.output_file)
    baseline = Baseline.load(args.baseline) if args.baseline else None  # a bad baseline fails before the work
    options = Options(fix=args.fix, unsafe_fixes=args.unsafe_fixes, diff=args.diff, add_noqa=args.add_noqa)
    machine = args.output_format in output.MACHINE_FORMATS and not args.output_file and not args.statistics
    results, _, _ = check_paths(args, options, wanted(args.quiet, machine or args.diff))
    problems = report_problems(results)

    if args.write_baseline:
        count = write_baseline(args.write_baseline, results)
        if not args.quiet:
            print(f"Wrote {count} finding{'s' * (count != 1)} to the baseline {args.write_baseline}.", file=sys.stderr)
        return EXIT_ERROR if problems else EXIT_CLEAN
    accepted = 0
    if baseline is not None:
        accepted, stale = baseline.filter(results)
        if stale and not args.quiet:
            print(f"note: {stale} baseline entr{'ies' if stale != 1 else 'y'} no longer occur (fixed?); "
                  f"rewrite it with --write-baseline {args.baseline} to drop them.", file=sys.stderr)
    if args.add_noqa:
        for result in results:
            for note in result.noqa_refused:
                print(f"warning: {result.path}:{note}", file=sys.stderr)
        added = sum(r.noqa_added for r in results)
        if not args.quiet:
            files = sum(1 for r in results if r.noqa_added)
            print(f"Added {added} noqa code{'s' * (added != 1)} to {files} file{'s' * (files != 1)}.",
                  file=sys.stderr)

    lines: list[str] = []
    fixed = sum(r.fixed for r in results)
    shown = output.not_checked(results)
    if args.diff:
        lines.extend(r.diff.rstrip("\n") for r in results if r.diff)
        if not args.quiet:
            print(f"Would fix {fixed} finding{'s' * (fixed != 1)}.", file=sys.stderr)
        write(args.output_file, lines)
        return EXIT_ERROR if problems else (EXIT_FINDINGS if fixed and not args.exit_zero else EXIT_CLEAN)
    if args.statistics:
        lines.extend(output.statistics(shown))
    elif args.output_format in ("json", "sarif", "junit", "gitlab"):
        render = {"json": output.as_json, "sarif": output.sarif, "junit": output.junit, "gitlab": output.gitlab}
        lines.append(render[args.output_format](shown))
    elif args.output_format == "github":
        lines.extend(output.github(shown))
    elif args.output_format == "concise":
        lines.extend(output.concise(shown))
    else:
        lines.extend(output.full(shown))
    write(args.output_file, lines)
    if not args.quiet and args.output_format in ("full", "concise"):
        print(output.summary(shown, fixed, accepted))
    found = any(r.records for r in results)
    if problems:
        return EXIT_ERROR
    return EXIT_FINDINGS if found and not args.exit_zero else EXIT_CLEAN


def run_report(argv: list[str]) -> int:
    from .check import Options
    from .progress import wanted
    from .report import REPORT_FORMATS, build, render

    args = report_parser().parse_args(argv)
    fmt = args.format or (Path(args.output_file).suffix.lstrip(".") if args.output_file else "md")
    if fmt not in REPORT_FORMATS:
        fmt = "md"
    check_output_file(args.output_file)
    results, resolve, base = check_paths(args, Options(references=True), wanted(args.quiet, not args.output_file))
    problems = report_problems(results)
    report = build(results, resolve, base)
    write(args.output_file, [render(report, fmt)])
    if args.output_file and not args.quiet:
        totals = report["totals"]
        print(f"Wrote the {fmt} report to {args.output_file}: {totals['files']} files, {totals['references']} API "
              f"references, {totals['findings']} findings.", file=sys.stderr)
    if problems:
        return EXIT_ERROR
    return EXIT_FINDINGS if report["totals"]["findings"] and not args.exit_zero else EXIT_CLEAN


class OutputError(Exception):
    """Where the output goes cannot take it."""


def write(path: str | None, lines: list[str]) -> None:
    text = "\n".join(lines)
    if path is None:
        if text:
            print(text)
        return
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_file(path, (text + "\n" if text else "").encode("utf-8"))
    except OSError as exc:
        raise OutputError(f"cannot write the output file {path}: {exc.strerror or exc}") from None
    except WriteRefused as exc:
        raise OutputError(f"cannot write the output file {path}: {exc}") from None


def check_output_file(path: str | None) -> None:
    """Refuse an unusable `-o` before the work, not after it."""
    if path is not None and os.path.isdir(path):
        raise OutputError(f"-o {path}: is a directory; name a file")


def run_rules(argv: list[str]) -> int:
    from ..rules import RULES
    from ..rules.pages import rule_url

    p = argparse.ArgumentParser(prog="lsp-check rules", description="List every rule.")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.json:
        check_env_docs_url()  # the links below would silently be the default
        import json

        print(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.name.lower(), "fix": r.fix,
                           "targets": list(r.targets), "url": rule_url(r.code), "table": str(r.table or "")} for r in RULES.values()],
                         indent=2))
        return EXIT_CLEAN
    for rule in sorted(RULES.values(), key=lambda r: r.code):
        print(f"{rule.code:<7} {rule.name:<34} {rule.severity.name.lower():<8} fix:{rule.fix:<10} "
              f"{','.join(rule.targets)}")
    return EXIT_CLEAN


def run_explain(argv: list[str]) -> int:
    from .explain import explain
    from ..rules import RULE_SET

    p = argparse.ArgumentParser(prog="lsp-check explain",
                                description="Explain a rule code (NPU103) or an API (torch.cuda.Stream).")
    p.add_argument("what")
    p.add_argument("--chip", type=chip_argument, metavar="CHIP", help="the Ascend chip (the `chip` setting)")
    p.add_argument("--torch-npu-version")
    args = p.parse_args(argv)
    cli = {k: v for k, v in (("chip", args.chip), ("torch_npu_version", args.torch_npu_version)) if v}
    settings = SettingsResolver(RULE_SET.prefixes, cli).settings(os.getcwd())
    text = explain(args.what, settings)
    if text is None:
        print(f"error: {args.what!r} is neither a rule code nor an API the tables know", file=sys.stderr)
        return EXIT_ERROR
    print(text)
    return EXIT_CLEAN


def run_run(argv: list[str]) -> int:
    from ..runner.run_commands import main as runner_main

    return runner_main(argv)


def run_port(argv: list[str]) -> int:
    from ..port.port_commands import port_main

    return port_main(argv)


def run_convert_weights(argv: list[str]) -> int:
    from ..port.port_commands import convert_weights_main

    return convert_weights_main(argv)


def run_compare_dumps(argv: list[str]) -> int:
    from ..runner.run_commands import compare_dumps_main

    return compare_dumps_main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command, rest = ("check", argv)
    if argv and argv[0] in SUBCOMMANDS:
        command, rest = argv[0], argv[1:]
    handler = {"check": run_check, "report": run_report, "rules": run_rules, "explain": run_explain,
               "run": run_run, "compare-dumps": run_compare_dumps, "port": run_port,
               "convert-weights": run_convert_weights}[command]
    try:
        return handler(rest)
    except BrokenPipeError:
        # The reader left (`lsp-check | head`): not a failure of the check, but the output
        # is incomplete, so not a clean exit either. Python would complain again at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("note: the output was cut short (its reader closed the pipe)", file=sys.stderr)
        return EXIT_ERROR
    except (ConfigError, TableError, OutputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # discovery errors and anything unexpected: a message, not a crash
        from .baseline import BaselineError
        from ..discovery import DiscoveryError

        if isinstance(exc, (DiscoveryError, BaselineError)):
            print(f"error: {exc}", file=sys.stderr)
        else:
            import traceback

            print(f"error: internal error, please report: {exc}\n{traceback.format_exc()}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
