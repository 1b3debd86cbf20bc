"""`lsp-check`: the rules headless. Exit 0 clean, 1 findings, 2 usage/config/internal error."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from .. import __version__
from ..engine.config import CHIPS, TARGETS, ConfigError, Settings, load_settings
from ..engine.tables import TableError

SUBCOMMANDS = ("check", "rules", "explain", "run")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def check_parser() -> argparse.ArgumentParser:
    from .output import FORMATS

    p = argparse.ArgumentParser(
        prog="lsp-check",
        description="Find what keeps PyTorch CUDA code from running on Ascend NPUs (torch_npu) or MindSpore.",
        epilog="Other commands: lsp-check rules | explain CODE|API | run FILE::FUNC. "
               "Exit status: 0 clean, 1 findings, 2 usage, configuration or internal error.",
    )
    p.add_argument("paths", nargs="*", default=["."], help="files, folders or globs (default: .)")
    p.add_argument("--output-format", choices=FORMATS, default="full")
    p.add_argument("-o", "--output-file", help="write the report here instead of stdout")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that need review (with --fix/--diff)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--config", type=Path, help="pyproject.toml to use instead of the nearest one")
    p.add_argument("--target", choices=TARGETS)
    p.add_argument("--chip", choices=CHIPS)
    p.add_argument("--torch-npu-version")
    p.add_argument("--mindspore-version")
    p.add_argument("--select", help="comma-separated codes or prefixes to enable (replaces the configured set)")
    p.add_argument("--extend-select", help="comma-separated codes or prefixes to enable in addition")
    p.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    p.add_argument("--no-cache", action="store_true", help="re-check files that did not change")
    p.add_argument("-j", "--jobs", type=int, default=None, help="parallel workers (default: one per core)")
    p.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    p.add_argument("--version", action="version", version=f"lsp-check {__version__}")
    return p


def overrides(args: argparse.Namespace) -> dict:
    out = {}
    for key in ("target", "chip", "torch_npu_version", "mindspore_version"):
        if getattr(args, key):
            out[key] = getattr(args, key)
    for key in ("select", "extend_select", "ignore"):
        if getattr(args, key):
            out[key] = [c.strip() for c in getattr(args, key).split(",") if c.strip()]
    return out


class SettingsResolver:
    """The settings for each file: its nearest [tool.ascend-lsp], then the command line."""

    def __init__(self, config: Path | None, cli: dict) -> None:
        self.cli = cli
        self.fixed: Settings | None = None
        if config is not None:
            self.fixed = load_settings(config).merged(cli) if config.exists() else None
            if self.fixed is None:
                raise ConfigError(f"{config}: no such file")
        self.by_folder: dict[str, Settings] = {}

    def __call__(self, path: str) -> Settings:
        if self.fixed is not None:
            return self.fixed
        folder = os.path.dirname(os.path.abspath(path))
        settings = self.by_folder.get(folder)
        if settings is None:
            settings = self.by_folder[folder] = load_settings(Path(folder)).merged(self.cli)
        return settings


def run_check(argv: list[str]) -> int:
    from . import output
    from .check import Cache, Options, run_checks
    from .discovery import discover

    args = check_parser().parse_args(argv)
    if args.unsafe_fixes and not (args.fix or args.diff):
        print("warning: --unsafe-fixes has no effect without --fix or --diff", file=sys.stderr)
    resolve = SettingsResolver(args.config, overrides(args))
    base = resolve(args.paths[0] if args.paths else ".")
    files = discover(args.paths, base)
    items = [(path, resolve(path)) for path in files]
    root = Path(base.root) if base.root else Path.cwd()
    cache = None if args.no_cache else Cache(root)
    options = Options(fix=args.fix, unsafe_fixes=args.unsafe_fixes, diff=args.diff)
    results = run_checks(items, options, cache, args.jobs)

    lines: list[str] = []
    problems = 0
    for result in results:
        if result.error:
            problems += 1
            print(f"error: {result.path}: {result.error}", file=sys.stderr)
        if result.skipped_write:
            problems += 1
            print(f"error: {result.path}: fixes not applied: {result.skipped_write}", file=sys.stderr)
        for message in result.rule_errors:
            print(f"error: {result.path}: internal error in a rule (please report):\n{message}", file=sys.stderr)
    fixed = sum(r.fixed for r in results)
    if args.diff:
        lines.extend(r.diff.rstrip("\n") for r in results if r.diff)
        if not args.quiet:
            print(f"Would fix {fixed} finding{'s' * (fixed != 1)}.", file=sys.stderr)
        write(args.output_file, lines)
        return EXIT_ERROR if problems else (EXIT_FINDINGS if fixed and not args.exit_zero else EXIT_CLEAN)
    if args.statistics:
        lines.extend(output.statistics(results))
    elif args.output_format == "json":
        lines.append(output.as_json(results))
    elif args.output_format == "sarif":
        lines.append(output.sarif(results))
    elif args.output_format == "github":
        lines.extend(output.github(results))
    elif args.output_format == "concise":
        lines.extend(output.concise(results))
    else:
        lines.extend(output.full(results))
    write(args.output_file, lines)
    if not args.quiet and args.output_format in ("full", "concise"):
        print(output.summary(results, fixed))
    found = any(r.records for r in results)
    if problems:
        return EXIT_ERROR
    return EXIT_FINDINGS if found and not args.exit_zero else EXIT_CLEAN


def write(path: str | None, lines: list[str]) -> None:
    text = "\n".join(lines)
    if path is None:
        if text:
            print(text)
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text + "\n" if text else "", encoding="utf-8")


def run_rules(argv: list[str]) -> int:
    from ..rules import RULES

    p = argparse.ArgumentParser(prog="lsp-check rules", description="List every rule.")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.json:
        import json

        print(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.name.lower(), "fix": r.fix,
                           "targets": list(r.targets), "url": r.url, "table": r.table} for r in RULES.values()],
                         indent=2))
        return EXIT_CLEAN
    for rule in sorted(RULES.values(), key=lambda r: r.code):
        print(f"{rule.code:<7} {rule.name:<34} {rule.severity.name.lower():<8} fix:{rule.fix:<10} "
              f"{','.join(rule.targets)}")
    return EXIT_CLEAN


def run_explain(argv: list[str]) -> int:
    from .explain import explain

    p = argparse.ArgumentParser(prog="lsp-check explain",
                                description="Explain a rule code (NPU103) or an API (torch.cuda.Stream).")
    p.add_argument("what")
    p.add_argument("--chip", choices=CHIPS)
    p.add_argument("--torch-npu-version")
    args = p.parse_args(argv)
    cli = {k: v for k, v in (("chip", args.chip), ("torch_npu_version", args.torch_npu_version)) if v}
    settings = load_settings(Path.cwd()).merged(cli)
    text = explain(args.what, settings)
    if text is None:
        print(f"error: {args.what!r} is neither a rule code nor an API the tables know", file=sys.stderr)
        return EXIT_ERROR
    print(text)
    return EXIT_CLEAN


def run_run(argv: list[str]) -> int:
    from ..runner.cli import main as runner_main

    return runner_main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command, rest = ("check", argv)
    if argv and argv[0] in SUBCOMMANDS:
        command, rest = argv[0], argv[1:]
    handler = {"check": run_check, "rules": run_rules, "explain": run_explain, "run": run_run}[command]
    try:
        return handler(rest)
    except (ConfigError, TableError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # discovery errors and anything unexpected: a message, not a crash
        from .discovery import DiscoveryError

        if isinstance(exc, DiscoveryError):
            print(f"error: {exc}", file=sys.stderr)
        else:
            print(f"error: internal error, please report: {exc}\n{traceback.format_exc()}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
