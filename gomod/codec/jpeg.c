//go:build cgo && !nocodecs

/* gomod/codec's JPEG decoder (see jpeg.h). Settings follow Pillow's JpegDecode.c, so that the output
 * equals Pillow's byte for byte: libjpeg's defaults (ISLOW DCT, fancy upsampling), scale_num 1 /
 * scale_denom for draft scaling, libjpeg's own colour-space guess, CMYK read as Adobe-inverted
 * ("CMYK;I") and converted with Pillow's cmyk2rgb, grayscale with Pillow's rgb2l. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "jpeg.h"

#define STR_(x) #x
#define STR(x) STR_(x)

const char *gp_jpeg_version(void) {
#ifdef LIBJPEG_TURBO_VERSION
    return "libjpeg-turbo " STR(LIBJPEG_TURBO_VERSION);
#else
    return "libjpeg " STR(JPEG_LIB_VERSION);
#endif
}

/* ------------------------------------------------------------------------------------------------
 * Errors: error_exit longjmps back to the C entry point, with libjpeg's message kept; warnings
 * (corrupt data libjpeg recovers from) are counted, never printed, and tolerated, as Pillow does. */

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} gp_err;

static void gp_error_exit(j_common_ptr c) {
    gp_err *e = (gp_err *)c->err;
    (*c->err->format_message)(c, e->msg);
    longjmp(e->jb, 1);
}

static void gp_output_message(j_common_ptr c) { (void)c; }

static void gp_emit_message(j_common_ptr c, int level) {
    if (level < 0) c->err->num_warnings++;
}

/* ------------------------------------------------------------------------------------------------
 * Source: the whole file in memory. Reading past its end means the file is truncated: Pillow's
 * suspending source would wait for more data there and then raise "image file is truncated"; this
 * source records the fact (and feeds libjpeg a fake EOI so it can stop cleanly), and the caller
 * refuses the file if that happened before the last wanted scanline was out. */

typedef struct {
    struct jpeg_source_mgr pub;
    int eof; /* fill_input_buffer was called with no data left */
} gp_src;

static const JOCTET gp_fake_eoi[2] = {0xFF, JPEG_EOI};

static void gp_init_source(j_decompress_ptr c) { (void)c; }
static void gp_term_source(j_decompress_ptr c) { (void)c; }

static boolean gp_fill_input_buffer(j_decompress_ptr c) {
    gp_src *s = (gp_src *)c->src;
    s->eof = 1;
    s->pub.next_input_byte = gp_fake_eoi;
    s->pub.bytes_in_buffer = 2;
    return TRUE;
}

static void gp_skip_input_data(j_decompress_ptr c, long n) {
    gp_src *s = (gp_src *)c->src;
    if (n <= 0) return;
    while (n > (long)s->pub.bytes_in_buffer) {
        n -= (long)s->pub.bytes_in_buffer;
        gp_fill_input_buffer(c);
        if (s->eof) return; /* nothing left to skip into */
    }
    s->pub.next_input_byte += n;
    s->pub.bytes_in_buffer -= (size_t)n;
}

typedef struct {
    struct jpeg_decompress_struct cinfo;
    gp_err err;
    gp_src src;
    JSAMPLE *row; /* conversion row, when the output is not libjpeg's own */
} gp_ctx;

static void gp_setup(gp_ctx *x, const uint8_t *data, size_t n) {
    memset(x, 0, sizeof(*x));
    x->cinfo.err = jpeg_std_error(&x->err.pub);
    x->err.pub.error_exit = gp_error_exit;
    x->err.pub.output_message = gp_output_message;
    x->err.pub.emit_message = gp_emit_message;
    jpeg_create_decompress(&x->cinfo);
    x->src.pub.init_source = gp_init_source;
    x->src.pub.fill_input_buffer = gp_fill_input_buffer;
    x->src.pub.skip_input_data = gp_skip_input_data;
    x->src.pub.resync_to_restart = jpeg_resync_to_restart;
    x->src.pub.term_source = gp_term_source;
    x->src.pub.next_input_byte = (const JOCTET *)data;
    x->src.pub.bytes_in_buffer = n;
    x->cinfo.src = &x->src.pub;
}

static int gp_fail(gp_ctx *x, char *msg) {
    if (x->src.eof) {
        snprintf(msg, GP_MSG_LEN, "truncated JPEG: the data ends before the image does (%s)", x->err.msg);
        return GP_ERR_TRUNCATED;
    }
    snprintf(msg, GP_MSG_LEN, "corrupt or unsupported JPEG: %s", x->err.msg);
    return GP_ERR_DATA;
}

int gp_jpeg_probe(const uint8_t *data, size_t n, gp_jpeg_header *h) {
    gp_ctx *x = (gp_ctx *)malloc(sizeof(gp_ctx));
    int rc;
    if (!x) {
        snprintf(h->msg, GP_MSG_LEN, "out of memory");
        return GP_ERR_NOMEM;
    }
    gp_setup(x, data, n);
    if (setjmp(x->err.jb)) {
        rc = gp_fail(x, h->msg);
        jpeg_destroy_decompress(&x->cinfo);
        free(x);
        return rc;
    }
    jpeg_read_header(&x->cinfo, TRUE);
    if (x->src.eof) { /* the header ran into the end of the data */
        snprintf(x->err.msg, sizeof x->err.msg, "in the header");
        longjmp(x->err.jb, 1);
    }
    h->width = (int)x->cinfo.image_width;
    h->height = (int)x->cinfo.image_height;
    h->components = x->cinfo.num_components;
    h->progressive = x->cinfo.progressive_mode ? 1 : 0;
    h->color_space = (int)x->cinfo.jpeg_color_space;
    jpeg_destroy_decompress(&x->cinfo);
    free(x);
    return GP_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Pillow's conversions (libImaging/Convert.c, Unpack.c), the same integer arithmetic. */

#define MULDIV255(a, b, tmp) (tmp = (a) * (b) + 128, ((((tmp) >> 8) + (tmp)) >> 8))
#define CLIP8(v) ((v) <= 0 ? 0 : (v) < 256 ? (v) : 255)
#define L24(r, g, b) ((r) * 19595 + (g) * 38470 + (b) * 7471 + 0x8000)

/* Adobe-inverted CMYK ("CMYK;I") to RGB, then to the output mode. */
static void gp_cmyk_row(uint8_t *out, const JSAMPLE *in, int w, int mode) {
    int x, tmp;
    for (x = 0; x < w; x++, in += 4) {
        int c = 255 - in[0], m = 255 - in[1], y = 255 - in[2], k = 255 - in[3];
        int nk = 255 - k;
        int r = CLIP8(nk - MULDIV255(c, nk, tmp));
        int g = CLIP8(nk - MULDIV255(m, nk, tmp));
        int b = CLIP8(nk - MULDIV255(y, nk, tmp));
        if (mode == 1) {
            *out++ = (uint8_t)(L24(r, g, b) >> 16);
        } else {
            *out++ = (uint8_t)r;
            *out++ = (uint8_t)g;
            *out++ = (uint8_t)b;
            if (mode == 2) *out++ = 255;
        }
    }
}

static void gp_rgb2l_row(uint8_t *out, const JSAMPLE *in, int w) {
    int x;
    for (x = 0; x < w; x++, in += 3) *out++ = (uint8_t)(L24(in[0], in[1], in[2]) >> 16);
}

/* ------------------------------------------------------------------------------------------------
 * Decode. dst holds the whole scaled image (out_height rows of `stride` bytes); with a window only
 * the window's rows and columns are guaranteed (the decoded region is wider by one iMCU on each side
 * where the image goes on, so that fancy upsampling sees the same neighbours as in a full decode). */

int gp_jpeg_decode(const uint8_t *data, size_t n, gp_jpeg_request *r, uint8_t *dst, size_t dst_len,
                   size_t stride) {
    gp_ctx *x = (gp_ctx *)malloc(sizeof(gp_ctx));
    struct jpeg_decompress_struct *c;
    int rc, ch, direct, cmyk, y_start, y_end;
    JDIMENSION xoff, xw;
    if (!x) {
        snprintf(r->msg, GP_MSG_LEN, "out of memory");
        return GP_ERR_NOMEM;
    }
    gp_setup(x, data, n);
    c = &x->cinfo;
    if (setjmp(x->err.jb)) {
        rc = gp_fail(x, r->msg);
        jpeg_destroy_decompress(c);
        free(x->row);
        free(x);
        return rc;
    }
    jpeg_read_header(c, TRUE);
    if (x->src.eof) {
        snprintf(x->err.msg, sizeof x->err.msg, "in the header");
        longjmp(x->err.jb, 1);
    }
    if (r->max_pixels > 0 && (long long)c->image_width * (long long)c->image_height > r->max_pixels) {
        snprintf(r->msg, GP_MSG_LEN, "the image is %ux%u (%lld pixels), over the limit of %lld pixels",
                 c->image_width, c->image_height, (long long)c->image_width * (long long)c->image_height,
                 r->max_pixels);
        jpeg_destroy_decompress(c);
        free(x);
        return GP_ERR_TOO_LARGE;
    }
    ch = r->mode == 1 ? 1 : r->mode == 2 ? 4 : 3;
    cmyk = c->num_components == 4;
    direct = 1;
    if (cmyk) {
        c->out_color_space = JCS_CMYK;
        direct = 0;
    } else if (c->jpeg_color_space == JCS_GRAYSCALE) {
        c->out_color_space = r->mode == 1 ? JCS_GRAYSCALE : r->mode == 2 ? JCS_EXT_RGBA : JCS_RGB;
    } else {
        c->out_color_space = r->mode == 2 ? JCS_EXT_RGBA : JCS_RGB;
        if (r->mode == 1) direct = 0; /* Pillow's convert("L") of the RGB image */
    }
    if (r->scale > 1) {
        c->scale_num = 1;
        c->scale_denom = (unsigned int)r->scale;
    }
    jpeg_calc_output_dimensions(c);
    r->out_width = (int)c->output_width;
    r->out_height = (int)c->output_height;
    if ((size_t)c->output_height > 0 &&
        (stride < (size_t)c->output_width * (size_t)ch ||
         dst_len < (size_t)(c->output_height - 1) * stride + (size_t)c->output_width * (size_t)ch)) {
        snprintf(r->msg, GP_MSG_LEN, "internal: destination too small for %ux%ux%d", c->output_height,
                 c->output_width, ch);
        jpeg_destroy_decompress(c);
        free(x);
        return GP_ERR_DATA;
    }
    jpeg_start_decompress(c);

    y_start = 0;
    y_end = (int)c->output_height;
    xoff = 0;
    xw = c->output_width;
    if (r->y1 > 0) {
        int hs = c->min_DCT_scaled_size * c->max_h_samp_factor;
        int vs = c->min_DCT_scaled_size * c->max_v_samp_factor;
        int x0 = r->x0 - hs, x1 = r->x1 + hs;
        if (x0 < 0) x0 = 0;
        if (x1 > (int)c->output_width) x1 = (int)c->output_width;
        y_start = r->y0 - vs;
        if (y_start < 0) y_start = 0;
        y_end = r->y1;
        if (x0 > 0 || x1 < (int)c->output_width) {
            xoff = (JDIMENSION)x0;
            xw = (JDIMENSION)(x1 - x0);
            jpeg_crop_scanline(c, &xoff, &xw);
        }
        if (y_start > 0) y_start = (int)jpeg_skip_scanlines(c, (JDIMENSION)y_start);
    }
    if (!direct) {
        x->row = (JSAMPLE *)malloc((size_t)xw * (size_t)c->output_components);
        if (!x->row) {
            snprintf(x->err.msg, sizeof x->err.msg, "out of memory");
            longjmp(x->err.jb, 1);
        }
    }
    while ((int)c->output_scanline < y_end) {
        uint8_t *out = dst + (size_t)c->output_scanline * stride + (size_t)xoff * (size_t)ch;
        JSAMPROW row = direct ? (JSAMPROW)out : x->row;
        if (jpeg_read_scanlines(c, &row, 1) != 1) {
            snprintf(x->err.msg, sizeof x->err.msg, "no scanline");
            longjmp(x->err.jb, 1);
        }
        if (!direct) {
            if (cmyk)
                gp_cmyk_row(out, x->row, (int)xw, r->mode);
            else
                gp_rgb2l_row(out, x->row, (int)xw);
        }
    }
    if (x->src.eof) { /* the data ended before the last wanted scanline: Pillow's "image file is truncated" */
        snprintf(x->err.msg, sizeof x->err.msg, "%s", "premature end of data");
        longjmp(x->err.jb, 1);
    }
    jpeg_abort_decompress(c); /* not finish: the rest of the file (after a window) is not read */
    jpeg_destroy_decompress(c);
    free(x->row);
    free(x);
    return GP_OK;
}
