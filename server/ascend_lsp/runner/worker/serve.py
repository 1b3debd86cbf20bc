"""The worker's loop: a hello, then one JSON job per stdin line and its result on the protocol stream."""

from __future__ import annotations

import json
import os
import sys
import time

from .benchmark_side import benchmark_dtype
from .dumps import compare_dump_dirs, write_dump
from .failures import SetupError, SnippetError, failure, import_required
from .layer_calls import compare_layers
from .mindspore_side import run_mindspore_side
from .run_target import Target
from .sides import compare_sides
from .torch_side import run_torch_side
from .user_code import UserCode

PROTOCOL = 1


def main() -> None:
    out = _claim_stdout()
    _send(out, {"type": "hello", "protocol": PROTOCOL, "pid": os.getpid(), "python": sys.version.split()[0],
                "executable": sys.executable})
    served = 0
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        if not line.strip():
            continue
        served += 1
        try:
            job = json.loads(line)
        except ValueError as exc:
            job, result = {}, failure("bad-job", f"job is not JSON: {exc}")
        else:
            result = handle(job, lambda message, _id=job.get("id"): _send(
                out, {"type": "progress", "id": _id, "message": message}))
        result.update(type="result", id=job.get("id"), protocol=PROTOCOL)
        result["worker"] = {"pid": os.getpid(), "jobs_served": served, **result.get("worker", {})}
        _send(out, result)


def _claim_stdout():
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "w", encoding="utf-8")


def _send(out, message: dict) -> None:
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


def handle(job: dict, progress) -> dict:
    if job.get("protocol") != PROTOCOL:
        return failure("protocol", f"client speaks protocol {job.get('protocol')}, this worker {PROTOCOL}")
    started = time.perf_counter()
    options = job.get("options", {})
    _apply_memory_limit(options.get("memory_limit_mb"))
    if job.get("kind") == "compare-dumps":
        return compare_dump_dirs(job)
    fresh_import = "torch" not in sys.modules
    try:
        torch = import_required("torch", "torch")
        import_s = time.perf_counter() - started if fresh_import else 0.0
        target = Target.prepare(torch, job)
    except SetupError as exc:
        return failure(exc.code, str(exc))
    worker_info = {"torch": torch.__version__, "torch_import_s": round(import_s, 3)}
    try:
        source = UserCode(job)
        progress("reference run on CPU")
        reference = run_torch_side(torch, source, job, target, side="reference")
        progress(f"target run on {target.label}")
        if target.name == "mindspore":
            candidate = run_mindspore_side(torch, source, job, reference)
        else:
            candidate = run_torch_side(torch, source, job, target, side="target")
    except SnippetError as exc:
        return failure("exception", f"{exc.side} run raised {exc.error['type']}: {exc.error['message']}",
                       error={**exc.error, "side": exc.side}, target=target.describe(), worker=worker_info,
                       notes=target.notes)
    except SetupError as exc:
        return failure(exc.code, str(exc), target=target.describe(), worker=worker_info)
    dtype = benchmark_dtype(torch, target, reference, candidate)
    benchmark, notes = None, []
    if dtype:
        progress(f"benchmark run on CPU in {dtype}")
        try:
            benchmark = run_torch_side(torch, source, job, target, side="benchmark", autocast=dtype)
            notes.append(f"benchmark: the reference model also ran on the CPU in {dtype}; each error is graded "
                         f"against that run's (msprobe's benchmark comparison)")
        except (SnippetError, SetupError) as exc:  # the target ran: grade it against float32 alone, and say so
            message = f"{exc.error['type']}: {exc.error['message']}" if isinstance(exc, SnippetError) else str(exc)
            notes.append(f"no benchmark: the reference model in {dtype} on the CPU raised {message}; graded "
                         f"against float32 alone")
    compare_started = time.perf_counter()
    outputs = compare_sides(torch, reference, candidate, job, target, benchmark)
    layers = None
    if reference.layers is not None and candidate.layers is not None:
        progress("comparing layers")
        layers = compare_layers(torch, reference.layers, candidate.layers, job.get("metrics", {}), target,
                                bench=benchmark.layers if benchmark else None)
        dump = options.get("dump")
        if dump:
            try:
                write_dump(torch, reference.layers, os.path.join(dump["dir"], "bench"), dump.get("tensors", True))
                write_dump(torch, candidate.layers, os.path.join(dump["dir"], "npu"), dump.get("tensors", True))
            except OSError as exc:
                return failure("dump", f"cannot write the dump under {dump['dir']}: {exc}")
    result = {
        "status": "ok",
        "target": target.describe(),
        "outputs": outputs,
        "notes": [f"emulated: {note}" for note in target.emulation_notes()] + target.notes + reference.notes +
                 candidate.notes + notes,
        "stdout": {"reference": reference.stdout, "target": candidate.stdout},
        "timing": {"import_s": round(import_s, 4), "reference_s": round(reference.seconds, 6),
                   "target_s": round(candidate.seconds, 6),
                   "benchmark_s": round(benchmark.seconds, 6) if benchmark else None,
                   "compare_s": round(time.perf_counter() - compare_started, 6),
                   "total_s": round(time.perf_counter() - started, 6)},
        "worker": worker_info,
    }
    if benchmark is not None:
        result["benchmark"] = {"dtype": dtype, "device": "cpu"}
    if options.get("capture_inputs"):
        result["inputs"] = {"reference": reference.draws, "target": candidate.draws}
    if layers is not None:
        result["layers"] = layers
    return result


def _apply_memory_limit(limit_mb) -> None:
    # The client sets RLIMIT_AS before exec for local workers; a remote worker gets the
    # same limit here (only ever lowered, never raised).
    if not limit_mb:
        return
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = int(limit_mb) * 2**20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft == resource.RLIM_INFINITY or soft > want:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))


if __name__ == "__main__":
    main()
