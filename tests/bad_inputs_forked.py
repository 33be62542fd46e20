"""The bad-input catalogue's forked cases (tests/test_bad_inputs.py runs them, one process each): the
cases that could crash the process (a subclass lying about its layout, huge sizes, extreme integers)
or that change process-wide state (threads, the environment). Data only, kept apart from the runner."""

U8 = "np.zeros((8, 10, 3), np.uint8)"
F32 = "np.zeros((8, 10, 3), np.float32)"

IAE, SE, DTE, PE = "InvalidArgumentError", "ShapeError", "DTypeError", "PipelineError"

# Cases that could crash the process, or change process-wide state (threads, environment), run forked.
# id -> (code, expected). expected is "ok" (the code runs without an exception; it may assert), or
# (exception class name, code, argument), all three exactly (argument None: the error names none).
FORKED_CASES = {
    # --- memory safety (a subclass lying about its layout)
    "lying_subclass_src": (
        "class L(np.ndarray):\n"
        "    shape = property(lambda s: (4000, 4000, 3)); strides = property(lambda s: (12000, 3, 1))\n"
        f"r = goprep.resize({U8}.view(L), (50, 50)); assert r.shape == (50, 50, 3)",
        "ok",
    ),
    "lying_subclass_out": (
        "class O(np.ndarray):\n    shape = property(lambda s: (50, 50, 3))\n"
        f"goprep.resize({U8}, (50, 50), out=np.zeros((1, 1, 3), np.uint8).view(O))",
        (SE, "bad_shape", "out"),
    ),
    "lying_subclass_list": (
        "class L(np.ndarray):\n    shape = property(lambda s: (4000, 4000, 3))\n"
        f"p = goprep.pipeline(lambda im: goprep.resize(im, (5, 5)), device='cpu'); p([{U8}.view(L), {U8}])",
        "ok",
    ),
    "masked_src": (f"goprep.resize(np.ma.masked_array({U8}), (4, 4))", (IAE, "invalid_argument", "src")),
    "masked_out": (f"goprep.flip({U8}, out=np.ma.masked_array({U8}))", (IAE, "invalid_argument", "out")),
    # --- sizes and huge requests
    "resize_1x1e8": (f"goprep.resize({U8}, (1, 100_000_000))", (SE, "too_large", "size")),
    "resize_1e8x1": (f"goprep.resize({U8}, (100_000_000, 1))", (SE, "too_large", "size")),
    "resize_aa_huge": (f"goprep.resize({U8}, (1, 50_000_000), antialias=True)", (SE, "too_large", "size")),
    "letterbox_huge": (f"goprep.letterbox({U8}, (1, 100_000_000))", (SE, "too_large", "size")),
    "size_beyond_max_dim": (f"goprep.resize({U8}, (1 << 31, 4))", (SE, "too_large", "size")),
    "size_10e400": (f"goprep.resize({U8}, 10**400)", (SE, "too_large", "size")),
    "size_zero": (f"goprep.resize({U8}, (0, 4))", (SE, "bad_shape", "size")),
    "size_negative": (f"goprep.resize({U8}, -3)", (SE, "bad_shape", "size")),
    "size_float": (f"goprep.resize({U8}, (4.0, 4))", (IAE, "invalid_argument", "size")),
    "size_bool": (f"goprep.resize({U8}, True)", (IAE, "invalid_argument", "size")),
    "size_str": (f"goprep.resize({U8}, '4')", (IAE, "invalid_argument", "size")),
    "size_triple": (f"goprep.resize({U8}, (4, 4, 4))", (IAE, "invalid_argument", "size")),
    "size_none": (f"goprep.resize({U8}, None)", (IAE, "invalid_argument", "size")),
    "size_np_int": (f"assert goprep.resize({U8}, (np.int8(3), np.uint64(5))).shape == (3, 5, 3)", "ok"),
    "output_bytes_too_large": (
        "goprep.resize(np.zeros((1, 1, 4), np.uint8), (1 << 30, 1 << 30))",
        (SE, "too_large", "size"),
    ),
    # --- crops with NumPy integers
    "crop_int8_overflow": (f"goprep.crop({U8}, np.int8(100), 0, np.int8(100), 2)", (SE, "bad_shape", "height")),
    "crop_int8_ok": (f"assert goprep.crop({U8}, np.int8(2), np.int8(3), np.int8(4), np.int8(5)).shape == (4, 5, 3)", "ok"),
    "crop_uint8_wrap": (f"goprep.crop({U8}, np.uint8(200), 0, np.uint8(100), 1)", (SE, "bad_shape", "height")),
    "crop_int64_pipeline": (
        "p = goprep.pipeline(lambda im: goprep.crop(im, np.int64(1), np.int64(2), np.int64(3), np.int64(4)), device='cpu')\n"
        f"assert p({U8}).shape == (3, 4, 3)",
        "ok",
    ),
    "crop_negative": (f"goprep.crop({U8}, -1, 0, 2, 2)", (SE, "bad_shape", "top")),
    "crop_zero": (f"goprep.crop({U8}, 0, 0, 0, 2)", (SE, "bad_shape", "height")),
    "crop_outside": (f"goprep.crop({U8}, 0, 5, 2, 6)", (SE, "bad_shape", "width")),
    "crop_float": (f"goprep.crop({U8}, 0.0, 0, 2, 2)", (IAE, "invalid_argument", "top")),
    "crop_bool": (f"goprep.crop({U8}, 0, True, 2, 2)", (IAE, "invalid_argument", "left")),
    "crop_huge": (f"goprep.crop({U8}, 10**400, 0, 1, 1)", (SE, "bad_shape", "height")),
    # --- mean/std/scale
    "mean_str": (f"goprep.normalize({U8}, mean='0.5', std=1)", (IAE, "invalid_argument", "mean")),
    "mean_list_of_str": (f"goprep.normalize({U8}, mean=['0.5'] * 3, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_true": (f"goprep.normalize({U8}, mean=True, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_none": (f"goprep.normalize({U8}, mean=None, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_nan": (f"goprep.normalize({U8}, mean=float('nan'), std=1)", (IAE, "invalid_argument", "mean")),
    "mean_inf_f32": (f"goprep.normalize({U8}, mean=1e39, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_10e400": (f"goprep.normalize({U8}, mean=10**400, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_nested": (f"goprep.normalize({U8}, mean=[[0.5, 0.5, 0.5]], std=1)", (IAE, "invalid_argument", "mean")),
    "mean_dict": (f"goprep.normalize({U8}, mean={{'r': 1}}, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_wrong_len": (f"goprep.normalize({U8}, mean=(1, 2), std=1)", (IAE, "invalid_argument", "mean")),
    "mean_ndarray": (f"goprep.normalize({U8}, mean=np.array([0.5, 0.5, 0.5]), std=np.float32(2))", "ok"),
    "mean_bool_array": (f"goprep.normalize({U8}, mean=np.array([True] * 3), std=1)", (IAE, "invalid_argument", "mean")),
    "std_zero": (f"goprep.normalize({U8}, mean=0, std=(1, 0, 1))", (IAE, "invalid_argument", "std")),
    "std_subnormal_zero_f32": (f"goprep.normalize({U8}, mean=0, std=1e-50)", (IAE, "invalid_argument", "std")),
    "std_str": (f"goprep.normalize({U8}, mean=0, std='1')", (IAE, "invalid_argument", "std")),
    "scale_str": (f"goprep.normalize({U8}, mean=0, std=1, scale='0.5')", (IAE, "invalid_argument", "scale")),
    "scale_list": (f"goprep.normalize({U8}, mean=0, std=1, scale=[0.5])", (IAE, "invalid_argument", "scale")),
    "scale_10e400": (f"goprep.normalize({U8}, mean=0, std=1, scale=10**400)", (IAE, "invalid_argument", "scale")),
    "scale_bool": (f"goprep.normalize({U8}, mean=0, std=1, scale=False)", (IAE, "invalid_argument", "scale")),
    "norm_dtype_bad": (f"goprep.normalize({U8}, mean=0, std=1, dtype='float64')", (IAE, "invalid_argument", "dtype")),
    "norm_dtype_list": (f"goprep.normalize({U8}, mean=0, std=1, dtype=['float32'])", (IAE, "invalid_argument", "dtype")),
    "norm_layout_bad": (f"goprep.normalize({U8}, mean=0, std=1, layout='NCHW')", (IAE, "invalid_argument", "layout")),
    "norm_layout_list": (f"goprep.normalize({U8}, mean=0, std=1, layout=['CHW'])", (IAE, "invalid_argument", "layout")),
    "norm_layout_array": (
        f"goprep.normalize({U8}, mean=.5, std=.5, layout=np.array(['CHW', 'HWC']))", (IAE, "invalid_argument", "layout")
    ),
    "norm_layout_array_1": (
        f"goprep.normalize({U8}, mean=.5, std=.5, layout=np.array(['CHW']))",
        (IAE, "invalid_argument", "layout"),
    ),
    "norm_neg_zero_distinct": (
        f"a = goprep.normalize({U8}, mean=0.0, std=1, scale=-1.0, layout='HWC')\n"
        f"b = goprep.normalize({U8}, mean=-0.0, std=1, scale=-1.0, layout='HWC')\n"
        "assert np.signbit(a).all() and not np.signbit(b).any(), (np.signbit(a).mean(), np.signbit(b).mean())",
        "ok",
    ),
    # --- pad values
    "pad_1e300_f32": (f"goprep.letterbox({F32}, (12, 12), pad_value=1e300)", (IAE, "invalid_argument", "pad_value")),
    "pad_10e400": (f"goprep.letterbox({U8}, (12, 12), pad_value=10**400)", (IAE, "invalid_argument", "pad_value")),
    "pad_nan": (f"goprep.letterbox({F32}, (12, 12), pad_value=float('nan'))", (IAE, "invalid_argument", "pad_value")),
    "pad_u8_256": (f"goprep.letterbox({U8}, (12, 12), pad_value=256)", (IAE, "invalid_argument", "pad_value")),
    "pad_u8_fraction": (f"goprep.letterbox({U8}, (12, 12), pad_value=1.5)", (IAE, "invalid_argument", "pad_value")),
    "pad_str": (f"goprep.letterbox({U8}, (12, 12), pad_value='0')", (IAE, "invalid_argument", "pad_value")),
    "pad_none": (f"goprep.letterbox({U8}, (12, 12), pad_value=None)", (IAE, "invalid_argument", "pad_value")),
    "pad_bool": (f"goprep.letterbox({U8}, (12, 12), pad_value=True)", (IAE, "invalid_argument", "pad_value")),
    "pad_np_uint8": (f"r, _ = goprep.letterbox({U8}, (12, 12), pad_value=np.uint8(7)); assert r[0, 0, 0] == 7", "ok"),
    "pad_neg_zero_f32": (
        f"r, _ = goprep.letterbox({F32}, (12, 12), pad_value=0.0); s, _ = goprep.letterbox({F32}, (12, 12), pad_value=-0.0)\n"
        "assert not np.signbit(r[0, 0, 0]) and np.signbit(s[0, 0, 0])",
        "ok",
    ),
    # --- flags, interpolation, colour codes
    "flip_int_flag": (f"goprep.flip({U8}, horizontal=1)", (IAE, "invalid_argument", "horizontal")),
    "flip_str_flag": (f"goprep.flip({U8}, vertical='yes')", (IAE, "invalid_argument", "vertical")),
    "antialias_none": (f"goprep.resize({U8}, 4, antialias=None)", (IAE, "invalid_argument", "antialias")),
    "antialias_nearest": (f"goprep.resize({U8}, 4, interpolation='nearest', antialias=True)", (IAE, "invalid_argument", "antialias")),
    "interp_bad": (f"goprep.resize({U8}, 4, interpolation='cubic')", (IAE, "invalid_argument", "interpolation")),
    "interp_list": (f"goprep.resize({U8}, 4, interpolation=['nearest'])", (IAE, "invalid_argument", "interpolation")),
    "cvt_list": (f"goprep.cvt_color({U8}, ['rgb2bgr'])", (IAE, "invalid_argument", "code")),
    "cvt_dict": (f"goprep.cvt_color({U8}, {{}})", (IAE, "invalid_argument", "code")),
    "cvt_bad": (f"goprep.cvt_color({U8}, 'rgb2hsv')", (IAE, "invalid_argument", "code")),
    "cvt_channels": (f"goprep.cvt_color({U8}, 'rgba2rgb')", (SE, "bad_shape", "src")),
    # --- sources
    "src_list": ("goprep.resize([[1, 2, 3]], 4)", (IAE, "invalid_argument", "src")),
    "src_none": ("goprep.flip(None)", (IAE, "invalid_argument", "src")),
    "src_int16": ("goprep.flip(np.zeros((4, 4, 3), np.int16))", (DTE, "bad_dtype", "src")),
    "src_float64": ("goprep.flip(np.zeros((4, 4, 3)))", (DTE, "bad_dtype", "src")),
    "src_big_endian": ("goprep.flip(np.zeros((4, 4, 3), '>f4'))", (DTE, "bad_dtype", "src")),
    "src_object": ("goprep.flip(np.zeros((4, 4, 3), object))", (DTE, "bad_dtype", "src")),
    # an (H, W) array is a one-channel image; an RGB-only op on it is refused
    "src_2d_rgb_only": ("goprep.cvt_color(np.zeros((4, 4), np.uint8), 'rgb2bgr')", (SE, "bad_shape", "src")),
    "src_5d": ("goprep.flip(np.zeros((1, 1, 4, 4, 3), np.uint8))", (SE, "bad_shape", "src")),
    "src_channels_2": ("goprep.flip(np.zeros((4, 4, 2), np.uint8))", (SE, "bad_shape", "src")),
    "src_zero_width": ("goprep.flip(np.zeros((4, 0, 3), np.uint8))", (SE, "bad_shape", "src")),
    "src_empty_batch": ("goprep.flip(np.zeros((0, 4, 4, 3), np.uint8))", (SE, "bad_shape", "src")),
    "src_unaligned_f32": (
        "b = np.zeros(4 * 4 * 3 * 4 + 1, np.uint8)[1:].view(np.float32).reshape(4, 4, 3); goprep.flip(b)",
        (IAE, "invalid_argument", "src"),
    ),
    "src_size1_huge_stride": (
        "x = np.lib.stride_tricks.as_strided(np.arange(12, dtype=np.uint8), (1, 4, 3), (1 << 62, 3, 1))\n"
        "assert np.array_equal(goprep.flip(x), x[:, ::-1])",
        "ok",
    ),
    "src_broadcast_zero_strides": (
        "x = np.broadcast_to(np.arange(3, dtype=np.uint8), (5, 6, 3)); assert np.array_equal(goprep.flip(x), x)",
        "ok",
    ),
    "src_negative_strides": (
        "x = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)[::-1, ::-2, ::-1]\n"
        "assert np.array_equal(goprep.flip(x), x[:, ::-1])",
        "ok",
    ),
    "src_readonly_ok": ("x = np.zeros((4, 4, 3), np.uint8); x.flags.writeable = False; goprep.flip(x)", "ok"),
    # --- out=
    "out_readonly": (
        f"o = np.zeros((8, 10, 3), np.uint8); o.flags.writeable = False; goprep.flip({U8}, out=o)",
        (IAE, "read_only", "out"),
    ),
    "out_overlap": ("x = np.zeros((8, 10, 3), np.uint8); goprep.flip(x, out=x)", (IAE, "overlap", "out")),
    "out_wrong_dtype": (f"goprep.flip({U8}, out=np.zeros((8, 10, 3), np.float32))", (DTE, "bad_dtype", "out")),
    "out_wrong_shape": (f"goprep.flip({U8}, out=np.zeros((8, 10, 4), np.uint8))", (SE, "bad_shape", "out")),
    "out_noncontig": (f"goprep.flip({U8}, out=np.zeros((8, 20, 3), np.uint8)[:, ::2])", (IAE, "invalid_argument", "out")),
    "out_list": (f"goprep.flip({U8}, out=[0])", (IAE, "invalid_argument", "out")),
    # --- traced images
    "traced_len": (
        f"p = goprep.pipeline(lambda im: (len(im), im)[1], device='cpu'); p({U8})",
        (PE, "pipeline", None),
    ),
    "traced_leak": (
        "box = []\n"
        "def f(im):\n    box.append(im); return goprep.flip(im)\n"
        f"goprep.pipeline(f, device='cpu')({U8}); goprep.resize(box[0], 4)",
        (PE, "pipeline", "src"),
    ),
    "traced_leak_crop": (
        "box = []\n"
        "def f(im):\n    box.append(im); return goprep.flip(im)\n"
        f"goprep.pipeline(f, device='cpu')({U8}); goprep.crop(box[0], 0, 0, 1, 1)",
        (PE, "pipeline", "src"),
    ),
    "traced_numpy": (f"goprep.pipeline(lambda im: np.asarray(im), device='cpu')({U8})", (PE, "pipeline", None)),
    "traced_arith": (f"goprep.pipeline(lambda im: im * 2, device='cpu')({U8})", (PE, "pipeline", None)),
    "traced_index": (f"goprep.pipeline(lambda im: im[0], device='cpu')({U8})", (PE, "pipeline", None)),
    "traced_two_resizes": (
        f"goprep.pipeline(lambda im: goprep.resize(goprep.resize(im, 4), 2), device='cpu')({U8})",
        (PE, "pipeline", None),
    ),
    "pipeline_returns_none": (f"goprep.pipeline(lambda im: None, device='cpu')({U8})", (PE, "pipeline", None)),
    "pipeline_empty_list": ("goprep.pipeline(lambda im: im, device='cpu')([])", (SE, "bad_shape", "src")),
    "pipeline_list_mixed_sizes": (
        f"goprep.pipeline(lambda im: im, device='cpu')([{U8}, np.zeros((3, 3, 3), np.uint8)])",
        (SE, "bad_shape", "src"),
    ),
    "pipeline_bad_device": ("goprep.pipeline(lambda im: im, device='gpu')", (IAE, "invalid_argument", "device")),
    "pipeline_device_list": ("goprep.pipeline(lambda im: im, device=['cpu'])", (IAE, "invalid_argument", "device")),
    "pipeline_output_bad": ("goprep.pipeline(lambda im: im, output='tensorflow')", (IAE, "invalid_argument", "output")),
    "pipeline_output_array": (
        "goprep.pipeline(lambda im: im, output=np.array(['a', 'b']))",
        (IAE, "invalid_argument", "output"),
    ),
    "pipeline_output_array_1": (
        "goprep.pipeline(lambda im: im, output=np.array(['numpy']))",
        (IAE, "invalid_argument", "output"),
    ),
    "pipeline_output_list": ("goprep.pipeline(lambda im: im, output=['numpy'])", (IAE, "invalid_argument", "output")),
    "pipeline_not_callable": ("goprep.pipeline(3)", (IAE, "invalid_argument", "fn")),
    # --- stream handles (the engine takes them as int64)
    "stream_negative": (
        f"goprep.pipeline(lambda im: goprep.flip(im))({U8}, stream=-1)",
        (IAE, "invalid_argument", "stream"),
    ),
    "stream_2_63": (
        f"goprep.pipeline(lambda im: goprep.flip(im))({U8}, stream=2**63)",
        (IAE, "invalid_argument", "stream"),
    ),
    "stream_2_64": (
        f"goprep.pipeline(lambda im: goprep.flip(im))({U8}, stream=np.uint64(2**64 - 1))",
        (IAE, "invalid_argument", "stream"),
    ),
    "to_device_stream_2_63": (f"goprep.to_device({U8}, stream=2**63)", (IAE, "invalid_argument", "stream")),
    # --- threads
    "threads_2_63": ("goprep.set_num_threads(2**63)", (IAE, "invalid_argument", "n")),
    "threads_10e400": ("goprep.set_num_threads(10**400)", (IAE, "invalid_argument", "n")),
    "threads_4097": ("goprep.set_num_threads(4097)", (IAE, "invalid_argument", "n")),
    "threads_zero": ("goprep.set_num_threads(0)", (IAE, "invalid_argument", "n")),
    "threads_float": ("goprep.set_num_threads(2.0)", (IAE, "invalid_argument", "n")),
    "threads_np_int": ("goprep.set_num_threads(np.int64(2)); assert goprep.get_num_threads() == 2", "ok"),
    "env_threads_100000": (
        "os.environ['GOPREP_NUM_THREADS'] = '100000'; goprep.flip(np.zeros((2, 2, 3), np.uint8))",
        (IAE, "invalid_argument", "GOPREP_NUM_THREADS"),
    ),
    "env_threads_word": (
        "os.environ['GOPREP_NUM_THREADS'] = 'many'; goprep.get_num_threads()",
        (IAE, "invalid_argument", "GOPREP_NUM_THREADS"),
    ),
    "env_threads_ok": (
        "os.environ['GOPREP_NUM_THREADS'] = '3'; assert goprep.get_num_threads() == 3",
        "ok",
    ),
    # --- boxes
    "unmap_boxes_bad_shape": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([1, 2, 3])",
        (SE, "bad_shape", "boxes"),
    ),
    "unmap_boxes_str": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 'x']])",
        (IAE, "invalid_argument", "boxes"),
    ),
    "unmap_boxes_ragged": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 4], [1, 2]])",
        (IAE, "invalid_argument", "boxes"),
    ),
    "unmap_boxes_complex": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 1j]])",
        (IAE, "invalid_argument", "boxes"),
    ),
    "unmap_boxes_10e400": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 10**400]])",
        (IAE, "invalid_argument", "boxes"),
    ),
}
