"""A failed request leaves no reference cycle in ``goprep serve`` (docs/perf/2026-12-06-serve-rss.md).
An error kept for later (a batch's result for one request, a future's exception, a read's error
through asyncio.wait_for) whose traceback reaches the frame that holds it makes a cycle through that
frame's locals: the batch's requests, tensors and replies then stay alive until the garbage
collector's next full pass, which under the soak's load held hundreds of MB. Each test runs a mix of
good and bad requests with the collector off and asserts that a collection afterwards finds none of
the server's frames, messages or errors."""

import asyncio
import contextlib
import gc
import os

import pytest

grpc = pytest.importorskip("grpc")  # the test extra installs the serve extra: never skipped in CI

import goprep._serve  # noqa: E402
from goprep._serve import protocol, soak  # noqa: E402
from goprep._serve.errors import BadRequest  # noqa: E402
from goprep._serve.oip import Engine, Limits, Parsed, Servicer  # noqa: E402
from goprep._serve.preprocess import make  # noqa: E402
from goprep._serve.service import Service  # noqa: E402

SERVE_DIR = os.path.dirname(goprep._serve.__file__)
# valid ones, bad files (one bad file in a batch of three), malformed requests, another model, a limit
KINDS = ("jpeg_640x480", "corrupt", "bad_in_batch", "jpeg_bomb", "wrong_shape", "jpeg_batch_3", "unknown_model",
         "too_many_images", "truncated")


@pytest.fixture(scope="module")
def engine():
    eng = Engine("goprep", make("goprep"), None, 0, Limits(max_batch=8))
    eng.warm()
    return eng


@pytest.fixture(scope="module")
def requests():
    cases = {c.kind: c for c in soak.build_cases("grpc")}
    return [soak.request_of(cases[k]) for k in KINDS]


def _servers(o):
    """Whether the unreachable object ``o`` is the server's: a frame of goprep/_serve, a request,
    a reply, a parsed request, or an error (grpc.aio's AbortError included)."""
    m = protocol.pb()
    if type(o).__name__ == "frame":
        return os.path.dirname(o.f_code.co_filename) == SERVE_DIR
    return isinstance(o, (m.ModelInferRequest, m.ModelInferResponse, Parsed, ValueError, grpc.aio.AbortError))


@contextlib.contextmanager
def _no_cycles():
    """Run the block with the collector off; then collect, and fail on any of the server's objects
    among the unreachable ones."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.set_debug(gc.DEBUG_SAVEALL)  # the unreachable objects kept in gc.garbage, to be named
        gc.collect()
        found = sorted({type(o).__name__ + (f" {o.f_code.co_name}" if type(o).__name__ == "frame" else "")
                        for o in gc.garbage if _servers(o)})
        assert not found, f"reference cycles hold the server's objects: {found}"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()
        if enabled:
            gc.enable()


def test_run_batch_errors(engine, requests):
    with _no_cycles():
        results, _ = engine.run_batch(requests)
        codes = [type(r).__name__ for r in results]
        assert "ModelInferResponse" in codes and "BadRequest" in codes and "NotFound" in codes, codes
        del results
        for req in requests:
            try:
                engine.run(req)
            except Exception:  # noqa: BLE001 - each request's own error; only what it leaves behind counts
                pass


@pytest.mark.parametrize("delay_us", [None, 2000], ids=["alone", "batched"])
def test_service_errors(engine, requests, delay_us):
    async def main():
        svc = Service(engine, 2, None, delay_us)

        def reader(req):
            async def read():
                if isinstance(req, BaseException):
                    raise req
                return req
            return read

        # REST's reader also raises: a malformed body, a connection lost in the middle of it
        bad = [BadRequest("the inference request is not valid JSON"), ConnectionResetError("Connection lost")]
        try:
            outs = await asyncio.gather(*(svc.infer(reader(r)) for r in [*requests, *bad]))
        finally:
            await svc.close()
        return sorted({o.code for o in outs})

    with _no_cycles():
        codes = asyncio.run(main())
    assert codes == ["CANCELLED", "INVALID_ARGUMENT", "NOT_FOUND", "OK", "RESOURCE_EXHAUSTED"]


def test_grpc_errors(engine, requests):
    async def main():
        svc = Service(engine, 2)
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((Servicer(svc).handler(),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                call = ch.unary_unary(f"/{protocol.SERVICE}/ModelInfer")
                codes = set()
                for req in requests:
                    try:
                        await call(req.SerializeToString(), timeout=30)
                        codes.add("OK")
                    except grpc.aio.AioRpcError as e:
                        codes.add(e.code().name)
                return sorted(codes)
        finally:
            await server.stop(None)
            await svc.close()

    with _no_cycles():
        codes = asyncio.run(main())
    assert codes == ["INVALID_ARGUMENT", "NOT_FOUND", "OK", "RESOURCE_EXHAUSTED"]
