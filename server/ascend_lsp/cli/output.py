"""Output formats: full and concise text, JSON, SARIF 2.1.0, GitHub annotations, JUnit XML,
GitLab Code Quality, statistics."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Iterable

from .. import __version__
from ..rules import RULES
from ..rules.pages import rule_url
from .baseline import keyed
from .check import FileResult, Record

FORMATS = ("full", "concise", "json", "sarif", "github", "junit", "gitlab")
MACHINE_FORMATS = frozenset({"json", "sarif", "github", "junit", "gitlab"})
SEVERITY_NAME = {1: "error", 2: "warning", 3: "info", 4: "hint"}
SARIF_LEVEL = {1: "error", 2: "warning", 3: "note", 4: "note"}
GITHUB_LEVEL = {1: "error", 2: "warning", 3: "notice", 4: "notice"}
GITLAB_SEVERITY = {1: "critical", 2: "major", 3: "minor", 4: "info"}
# Characters XML 1.0 cannot carry (form feeds do occur in Python source).
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
SARIF_SCHEMA = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
NOT_CHECKED = "E902"


def not_checked(results: list[FileResult]) -> list[FileResult]:
    """`results` where a file that could not be checked has the reason as an E902 finding
    at 1:1 (Ruff's io-error), so every format lists it and none reads as clean. `results`
    itself is left as it is: the baseline works on it, and never accepts an E902."""
    return [dataclasses.replace(result, records=[
        Record(NOT_CHECKED, result.error, 1, 0, 0, 0, 0, "", 0, "", 0), *result.records])
        if result.error else result for result in results]


def fingerprinted(result: FileResult) -> Iterable[tuple[str, Record]]:
    """(fingerprint, record): a hash of the baseline key (file, code, line text,
    occurrence), so a finding keeps its identity when lines above it move."""
    for key, index, r in keyed(result, Path.cwd()):
        yield hashlib.blake2b(repr((*key, index)).encode(), digest_size=16).hexdigest(), r


def where(path: str, r: Record) -> str:
    """path:line:col, 1-based, with the cell for notebooks."""
    if r.cell:
        return f"{path}:{r.cell}:{r.cell_line + 1}:{r.col + 1}"
    return f"{path}:{r.line + 1}:{r.col + 1}"


def shown_path(path: str) -> str:
    """Another file's path as a related location names it: relative to the current folder
    where it lies below it (as the checked files are named), else as it is."""
    try:
        relative = os.path.relpath(path) if os.path.isabs(path) else path
    except ValueError:  # on another Windows drive
        return path
    return path if relative.startswith("..") else relative


def related_where(path: str, related: tuple) -> str:
    """path:line:col of a related location (results.Record.related), 1-based; `path`: the finding's file."""
    other, cell, cell_line, line, col = related[:5]
    shown = shown_path(other) if other else path
    return f"{shown}:{cell}:{cell_line + 1}:{col + 1}" if cell else f"{shown}:{line + 1}:{col + 1}"


def notes(path: str, r: Record) -> list[str]:
    """`note: message (path:line:col)` per related location: the place last, so that no
    reader of `path:line:col: CODE message` lines takes a note for a finding."""
    return [f"note: {related[7]} ({related_where(path, related)})" for related in r.related]


def marker(r: Record) -> str:
    return {"safe": "[*] ", "unsafe": "[-] "}.get(r.fix_applicability, "")


def url(code: str) -> str:
    return rule_url(code) if code in RULES else ""


def concise(results: list[FileResult]) -> Iterable[str]:
    for result in results:
        for r in result.records:
            yield f"{where(result.path, r)}: {r.code} {marker(r)}{r.message}"
            for note in notes(result.path, r):
                yield "    " + note


def full(results: list[FileResult]) -> Iterable[str]:
    for result in results:
        for r in result.records:
            yield f"{where(result.path, r)}: {r.code} {marker(r)}{r.message}"
            if r.code == NOT_CHECKED:  # no line to show
                yield ""
                continue
            number = str(r.cell_line + 1)
            yield f"{' ' * len(number)} |"
            yield f"{number} | {r.source_line}"
            room = len(r.source_line) - r.source_col
            width = min(r.end_col - r.col, room) if r.end_line == r.line else room
            yield f"{' ' * len(number)} | {' ' * r.source_col}{'^' * max(width, 1)} {SEVERITY_NAME[r.severity]}"
            if r.fix_title:
                kind = {"safe": "fix", "unsafe": "unsafe fix", "display": "suggestion"}.get(r.fix_applicability, "fix")
                yield f"{' ' * len(number)} = {kind}: {r.fix_title}"
            for note in notes(result.path, r):
                yield f"{' ' * len(number)} = {note}"
            yield f"{' ' * len(number)} = docs: {url(r.code)}"
            yield ""


def as_json(results: list[FileResult]) -> str:
    out = []
    for result in results:
        for r in result.records:
            out.append({
                "code": r.code,
                "message": r.message,
                "severity": SEVERITY_NAME[r.severity],
                "filename": result.path,
                "cell": r.cell or None,
                "location": {"row": r.line + 1, "column": r.col + 1},
                "end_location": {"row": r.end_line + 1, "column": r.end_col + 1},
                "url": url(r.code),
                "fix": {
                    "applicability": r.fix_applicability,
                    "message": r.fix_title,
                    "edits": [{"content": text, "location": {"row": a + 1, "column": b + 1},
                               "end_location": {"row": c + 1, "column": d + 1}} for a, b, c, d, text in r.edits],
                } if r.fix_title else None,
                "origin": r.extra.get("source") or None,
                "related": [{
                    "message": message,
                    "filename": shown_path(other) if other else result.path,
                    "cell": cell or None,
                    "location": {"row": line + 1, "column": col + 1},
                    "end_location": {"row": end_line + 1, "column": end_col + 1},
                } for other, cell, _, line, col, end_line, end_col, message in r.related],
            })
    # one finding a line: the encoder written in C serves only output without indentation
    return "[\n" + ",\n".join("  " + json.dumps(finding, ensure_ascii=False) for finding in out) + "\n]" if out else "[]"


def sarif(results: list[FileResult]) -> str:
    rules: list[dict[str, object]] = []
    index = {}
    for code in sorted(RULES):
        rule = RULES[code]
        index[code] = len(rules)
        rules.append({
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": rule.doc.what},
            "fullDescription": {"text": rule.doc.why},
            "helpUri": rule_url(code),
            "help": {"text": rule.doc.fix},
            "defaultConfiguration": {"level": SARIF_LEVEL[int(rule.severity)]},
            "properties": {"targets": list(rule.targets)},
        })
    sarif_results = []
    for result in results:
        here = {"uri": result.path.replace("\\", "/"), "uriBaseId": "%SRCROOT%"}
        for fingerprint, r in fingerprinted(result):
            region = {"startLine": r.line + 1, "startColumn": r.col + 1, "endLine": r.end_line + 1,
                      "endColumn": r.end_col + 1}
            entry = {
                "ruleId": r.code,
                "ruleIndex": index[r.code],
                "level": SARIF_LEVEL[r.severity],
                "message": {"text": r.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": here,
                    "region": region,
                }}],
                "partialFingerprints": {"lspCheckKey/v1": fingerprint},
            }
            if r.related:
                # GitHub code scanning links a related location only where the message embeds it
                links = ", ".join(f"[{related_where(result.path, related)}]({number})"
                                  for number, related in enumerate(r.related))
                entry["message"] = {"text": f"{_sarif_literal(r.message)} Related: {links}."}
                entry["relatedLocations"] = [{
                    "id": number,
                    "message": {"text": message},
                    "physicalLocation": {
                        "artifactLocation": elsewhere(other) if other else here,
                        "region": {"startLine": line + 1, "startColumn": col + 1, "endLine": end_line + 1,
                                   "endColumn": end_col + 1},
                    },
                } for number, (other, _, _, line, col, end_line, end_col, message) in enumerate(r.related)]
            if r.edits and r.fix_applicability in ("safe", "unsafe"):
                entry["fixes"] = [{
                    "description": {"text": r.fix_title},
                    "artifactChanges": [{
                        "artifactLocation": here,
                        "replacements": [{
                            "deletedRegion": {"startLine": a + 1, "startColumn": b + 1, "endLine": c + 1,
                                              "endColumn": d + 1},
                            "insertedContent": {"text": text},
                        } for a, b, c, d, text in r.edits],
                    }],
                }]
            sarif_results.append(entry)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "ascend-lsp",
                "version": __version__,
                "informationUri": "https://github.com/ascend-lsp/ascend-lsp",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation(results)],
            "results": sarif_results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)


def _sarif_literal(text: str) -> str:
    """Plain text in a SARIF message with embedded links: its brackets escaped (SARIF 2.1.0 §3.11.6)."""
    return text.replace("[", "\\[").replace("]", "\\]")


def elsewhere(path: str) -> dict:
    """The SARIF artifactLocation of another file: relative to the checked tree's root
    (%SRCROOT%) where it lies below the current folder, else its file URI."""
    shown = shown_path(path)
    if os.path.isabs(shown):
        return {"uri": Path(shown).as_uri()}
    return {"uri": shown.replace("\\", "/"), "uriBaseId": "%SRCROOT%"}


def invocation(results: list[FileResult]) -> dict:
    """What kept the run from checking everything (unreadable files, failed rules), as
    SARIF tool notifications, so code scanning shows them too."""
    notes = []
    for result in results:
        uri = {"physicalLocation": {"artifactLocation": {"uri": result.path.replace("\\", "/"),
                                                         "uriBaseId": "%SRCROOT%"}}}
        problems = [result.error, result.skipped_write, *(m.partition("\n")[0] for m in result.rule_errors)]
        notes += [{"level": "error", "message": {"text": text}, "locations": [uri]} for text in problems if text]
    return {"executionSuccessful": not notes, "toolExecutionNotifications": notes}


def _escape_github(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github(results: list[FileResult]) -> Iterable[str]:
    for result in results:
        for r in result.records:
            props = (f"file={_escape_github(result.path, True)},line={r.line + 1},col={r.col + 1},"
                     f"endLine={r.end_line + 1},endColumn={r.end_col + 1},title={r.code}")
            text = "\n".join([f"{r.code} {r.message}", *notes(result.path, r)])
            yield f"::{GITHUB_LEVEL[r.severity]} {props}::{_escape_github(text)}"


def junit(results: list[FileResult]) -> str:
    """One testsuite per checked file, one failing testcase per finding; a clean file is
    one passing testcase, an unreadable one an error, so CI test views list every file."""
    from xml.etree import ElementTree

    root = ElementTree.Element("testsuites", name="lsp-check")
    totals: Counter[str] = Counter()
    for result in results:
        suite = ElementTree.SubElement(root, "testsuite", name=result.path)
        cases = failures = errors = 0
        if result.error:
            case = ElementTree.SubElement(suite, "testcase", classname=result.path, name="check")
            ElementTree.SubElement(case, "error", message=_xml(result.error), type=NOT_CHECKED).text = _xml(result.error)
            cases, errors = 1, 1
        elif not result.records:
            ElementTree.SubElement(suite, "testcase", classname=result.path, name="no findings")
            cases = 1
        for r in result.records:
            if r.code == NOT_CHECKED:  # the error test case above
                continue
            case = ElementTree.SubElement(suite, "testcase", classname=result.path,
                                          name=f"{r.code} at {where(result.path, r)}")
            failure = ElementTree.SubElement(case, "failure", message=_xml(r.message), type=r.code)
            failure.text = _xml("\n".join([f"{where(result.path, r)}: {r.code} {r.message}", r.source_line,
                                            *notes(result.path, r), f"docs: {url(r.code)}"]))
            cases += 1
            failures += 1
        suite.set("tests", str(cases))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        totals.update(tests=cases, failures=failures, errors=errors)
    for name in ("tests", "failures", "errors"):
        root.set(name, str(totals[name]))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode")


def _xml(text: str) -> str:
    return XML_INVALID.sub("\ufffd", text)


def gitlab(results: list[FileResult]) -> str:
    """GitLab Code Quality; merge requests show the issues whose fingerprint the target
    branch does not have."""
    out = []
    for result in results:
        for fingerprint, r in fingerprinted(result):
            out.append({
                # one line: the merge request widget shows no other field of a related place
                "description": "; ".join([f"{r.code} {r.message}", *notes(result.path, r)]),
                "check_name": r.code,
                "fingerprint": fingerprint,
                "severity": GITLAB_SEVERITY[r.severity],
                "location": {"path": result.path.replace("\\", "/").removeprefix("./"),
                             "lines": {"begin": r.line + 1}},
            })
    # one finding a line: the encoder written in C serves only output without indentation
    return "[\n" + ",\n".join("  " + json.dumps(finding, ensure_ascii=False) for finding in out) + "\n]" if out else "[]"


def statistics(results: list[FileResult]) -> Iterable[str]:
    counts = Counter(r.code for result in results for r in result.records)
    fixable = Counter(r.code for result in results for r in result.records if r.fix_applicability == "safe")
    for code, count in counts.most_common():
        rule = RULES.get(code)
        yield f"{count:>6}  {code:<7} {'[*]' if fixable[code] else '   '} {rule.name if rule else ''}"


def summary(results: list[FileResult], fixed: int, baselined: int = 0) -> str:
    records = [r for result in results for r in result.records]
    safe = sum(r.fix_applicability == "safe" for r in records)
    unsafe = sum(r.fix_applicability == "unsafe" for r in records)
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} finding{'s' * (fixed != 1)}.")
    if records:
        files = sum(1 for result in results if result.records)
        parts.append(f"Found {len(records)} finding{'s' * (len(records) != 1)} in {files} "
                     f"file{'s' * (files != 1)}.")
        if safe:
            parts.append(f"[*] {safe} fixable with `--fix`.")
        if unsafe:
            parts.append(f"[-] {unsafe} more with `--unsafe-fixes`.")
    elif not fixed:
        parts.append("All checks passed.")
    if baselined:
        parts.append(f"{baselined} finding{'s' * (baselined != 1)} accepted by the baseline.")
    return " ".join(parts)

