/* benchmarks/jpeg_raw_budget.py's decoders (libjpeg-turbo, loaded with ctypes; not part of goprep):
 * the reduced decode as gomod/codec does it (RGB, a window of columns with jpeg_crop_scanline and
 * rows skipped above / stopped below), the same image's raw Y/Cb/Cr planes through
 * jpeg_read_raw_data (the whole width: libjpeg-turbo refuses jpeg_crop_scanline and
 * jpeg_skip_scanlines with raw_data_out), the raw planes of the window only (through libjpeg's
 * internal coefficient controller, which honours the crop: what a raw path could do at best), and
 * the entropy decode alone (jpeg_read_coefficients: the floor under every decode path).
 * Errors exit through longjmp and return -1. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>
#include <jpegint.h>

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
} err_t;

static void on_error(j_common_ptr c) { longjmp(((err_t *)c->err)->jb, 1); }

/* The row pointers of the next iMCU row of each component's plane (rows past prows clamp to the last:
 * the padding rows of the image's last iMCU row). */
static void plane_rows(j_decompress_ptr c, int lines, unsigned char *planes, int ps, int prows, JSAMPROW rows[3][32],
                       JSAMPARRAY arr[3]) {
    int ci, k;
    for (ci = 0; ci < 3; ci++) {
        int rpc = c->comp_info[ci].v_samp_factor * c->comp_info[ci].DCT_scaled_size;
        int base = (int)c->output_scanline / lines * rpc;
        for (k = 0; k < rpc && k < 32; k++)
            rows[ci][k] = planes + (size_t)ci * ps * prows + (size_t)(base + k < prows ? base + k : prows - 1) * ps;
        arr[ci] = rows[ci];
    }
}

/* mode 0: RGB window, 1: raw whole image, 2: raw window, 3: entropy only.
 * rgb: output_height rows of 3*output_width; planes: 3 planes of `ps` bytes a row, `prows` rows.
 * info[0..1]: output height, width; info[2+2c], info[3+2c]: component c's plane rows and width. */
int gp_budget(int mode, const unsigned char *data, unsigned long n, int scale, int y0, int y1, int x0, int x1,
              unsigned char *rgb, unsigned char *planes, int ps, int prows, int *info) {
    struct jpeg_decompress_struct c;
    err_t e;
    int ci;
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = on_error;
    if (setjmp(e.jb)) {
        jpeg_destroy_decompress(&c);
        return -1;
    }
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, data, n);
    jpeg_read_header(&c, TRUE);
    if (mode == 3) {
        jpeg_read_coefficients(&c);
        jpeg_destroy_decompress(&c);
        return 0;
    }
    c.scale_num = 1;
    c.scale_denom = (unsigned)scale;
    c.out_color_space = JCS_RGB;
    if (mode == 1) c.raw_data_out = TRUE;
    jpeg_start_decompress(&c);
    info[0] = (int)c.output_height;
    info[1] = (int)c.output_width;
    for (ci = 0; ci < c.num_components && ci < 3; ci++) {
        info[2 + 2 * ci] = (int)c.comp_info[ci].downsampled_height;
        info[3 + 2 * ci] = (int)c.comp_info[ci].downsampled_width;
    }
    if (mode == 1) {
        int lines = c.max_v_samp_factor * c.min_DCT_scaled_size;
        while (c.output_scanline < c.output_height) {
            JSAMPROW rows[3][32];
            JSAMPARRAY arr[3];
            plane_rows(&c, lines, planes, ps, prows, rows, arr);
            jpeg_read_raw_data(&c, arr, (JDIMENSION)lines);
        }
    } else {
        int hs = c.min_DCT_scaled_size * c.max_h_samp_factor, vs = c.min_DCT_scaled_size * c.max_v_samp_factor;
        JDIMENSION xo = (JDIMENSION)(x0 - hs > 0 ? x0 - hs : 0);
        JDIMENSION xw = (JDIMENSION)((x1 + hs < (int)c.output_width ? x1 + hs : (int)c.output_width) - (int)xo);
        jpeg_crop_scanline(&c, &xo, &xw);
        if (y0 - vs > 0) jpeg_skip_scanlines(&c, (JDIMENSION)(y0 - vs));
        if (mode == 0) {
            while ((int)c.output_scanline < y1) {
                JSAMPROW r = rgb + (size_t)c.output_scanline * c.output_width * 3 + xo * 3;
                jpeg_read_scanlines(&c, &r, 1);
            }
        } else { /* the coefficient controller straight into the planes, as jpeg_read_raw_data would */
            int lines = c.max_v_samp_factor * c.min_DCT_scaled_size;
            while ((int)c.output_scanline < y1) {
                JSAMPROW rows[3][32];
                JSAMPARRAY arr[3];
                plane_rows(&c, lines, planes, ps, prows, rows, arr);
                if (!(*c.coef->decompress_data)(&c, arr)) break;
                c.output_scanline += (JDIMENSION)lines;
            }
        }
    }
    jpeg_abort_decompress(&c);
    jpeg_destroy_decompress(&c);
    return 0;
}
