"""deploy/kubernetes.yaml (docs/SERVING.md, "Deploying"): valid against the Kubernetes API schema
(kubernetes-validate, strict: unknown fields are errors), its probes on the server's gRPC health
service, and its server arguments accepted by ``python -m goprep serve``. Not applied to a cluster."""

import pathlib

import pytest

yaml = pytest.importorskip("yaml")
kv = pytest.importorskip("kubernetes_validate")  # the test extra installs it: never skipped in CI

from goprep._serve import server  # noqa: E402

MANIFEST = pathlib.Path(__file__).resolve().parent.parent / "deploy" / "kubernetes.yaml"


def _docs():
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


def test_manifest_matches_the_kubernetes_schema():
    docs = _docs()
    assert [d["kind"] for d in docs] == ["Deployment", "Service"]
    for d in docs:
        kv.validate(d, kv.latest_version(), strict=True)  # raises on any schema violation
    bad = _docs()[0]
    bad["spec"]["template"]["spec"]["containers"][0]["livenessProbes"] = {}  # a typo the check must catch
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, kv.latest_version(), strict=True)
    assert "UNTESTED ON A CLUSTER" in MANIFEST.read_text()


def test_manifest_probes_and_arguments_fit_the_server():
    dep, svc = _docs()
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    assert c["args"][:4] == ["python", "-m", "goprep", "serve"]
    args = server._parser().parse_args(c["args"][4:])  # every flag known and in range
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"grpc": args.port, "metrics": args.metrics_port} and args.host == "0.0.0.0"
    for probe, service in (("livenessProbe", "live"), ("readinessProbe", "ready"), ("startupProbe", "live")):
        assert c[probe]["grpc"] == {"port": args.port, "service": service}
    assert "ready" in server.HEALTH_READY and "live" in server.HEALTH_LIVE
    assert dep["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > args.grace
    assert {p["targetPort"] for p in svc["spec"]["ports"]} == set(ports)
    assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
