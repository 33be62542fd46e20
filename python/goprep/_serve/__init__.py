"""The reference inference server (``python -m goprep serve``) and its load test
(``python -m goprep serve-bench``): gRPC on loopback, three interchangeable preprocessing
implementations, an optional ONNX model, Prometheus metrics. See docs/SERVING.md."""
