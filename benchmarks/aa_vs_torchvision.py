"""A quick side-by-side timer for the issue-13 antialias rows: torchvision v2 (uint8 tensors, torch 1
thread) against goprep (1 thread) on the bench suite's photographs, rounds interleaved, thread CPU time
per image, medians. ~1 minute; `python -m goprep bench --sizes 1080p --batches 1` is the judged run.

    python benchmarks/aa_vs_torchvision.py [rounds] [--no-goprep]
"""
import sys, time, statistics, warnings
import torch
from torchvision.transforms import v2
torch.set_num_threads(1)
warnings.filterwarnings("ignore")
from goprep._benchsuite import images
from goprep._benchsuite.impls import MEAN, STD
use_gp = "--no-goprep" not in sys.argv
rows = {}
p1080 = images.photos(images.SIZES["1080p"]); p512 = images.photos(images.SIZES["512"])
def tvaa(interp):
    t = v2.Compose([v2.Resize((224, 224), interpolation=interp, antialias=True), v2.RandomHorizontalFlip(p=1.0),
                    v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean=list(MEAN), std=list(STD))])
    def run(x):
        with torch.inference_mode():
            return t(torch.from_numpy(x).permute(2, 0, 1)).contiguous().numpy()
    return run
rows["tv aa bilinear 1080"] = (tvaa(v2.InterpolationMode.BILINEAR), p1080)
rows["tv aa bicubic 1080"] = (tvaa(v2.InterpolationMode.BICUBIC), p1080)
tv2 = v2.Compose([v2.Resize(256), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])
ten512 = [torch.from_numpy(p.copy()).permute(2, 0, 1).contiguous() for p in p512]
def tveval(x):
    with torch.inference_mode():
        return tv2(x)
rows["tv eval 512"] = (tveval, ten512)
if use_gp:
    import goprep, goprep.transforms as gt
    from goprep._benchsuite.impls import goprep_pipelines
    pipes = goprep_pipelines()
    goprep.set_num_threads(1)
    for k in ["task_antialias", "task_antialias_bicubic", "task_antialias_torch", "task_antialias_bicubic_torch"]:
        rows["gp " + k] = (pipes[k], p1080)
    g2 = gt.from_torchvision(tv2, device="cpu")
    rows["gp eval 512"] = (g2, ten512)
samples = {k: [] for k in rows}
N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 7
for k, (f, xs) in rows.items():
    for x in xs: f(x)
for r in range(N):
    for k, (f, xs) in rows.items():
        reps = max(1, int(60 / len(xs))) if "512" in k else max(1, int(15 / len(xs)))
        t0 = time.thread_time()
        for _ in range(reps):
            for x in xs: f(x)
        samples[k].append((time.thread_time() - t0) / (reps * len(xs)))
med = {k: statistics.median(v) for k, v in samples.items()}
for k, v in med.items():
    print(f"{k:36} {v*1e3:7.3f} ms/image")
if use_gp:
    for gk, tk in [("gp task_antialias", "tv aa bilinear 1080"), ("gp task_antialias_bicubic", "tv aa bicubic 1080"),
                   ("gp task_antialias_torch", "tv aa bilinear 1080"), ("gp task_antialias_bicubic_torch", "tv aa bicubic 1080"),
                   ("gp eval 512", "tv eval 512")]:
        print(f"{gk:36} vs {tk}: {med[tk]/med[gk]:.2f}x")
