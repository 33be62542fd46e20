//go:build cgo && !nocodecs

/* gomod/codec's PNG decoder (see png.h). libpng expands bit depths below 8 (as Pillow's "L;2",
 * "L;4", "1" and "P;N" raw modes do); palette lookup, tRNS and the conversions to the output mode
 * are Pillow's (Convert.c): RGBA->RGB and LA->RGB drop alpha, P->RGBA takes alpha from tRNS, L and
 * RGB with a tRNS colour get alpha 0 on that colour only in RGBA mode, Gray is L24(r, g, b) >> 16. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "png_codec.h"

const char *gp_png_version(void) { return "libpng " PNG_LIBPNG_VER_STRING; }

typedef struct {
    const uint8_t *data;
    size_t n, pos;
    int eof;
    jmp_buf jb;
    char msg[GP_MSG_LEN];
    png_structp png;
    png_infop info;
    uint8_t *buf; /* interlaced: the whole image; else one row */
    png_bytep *rows;
    long rows_done, rows_expected; /* rows (of every Adam7 pass) fully decompressed and unfiltered */
    int interlaced;
    png_uint_32 h;
} gp_png;

/* A no-op user transform: libpng calls it once per row once the row's data is complete, before the
 * row is copied out. It counts rows, so that a file cut after its last row's data (in the zlib
 * checksum, the IDAT CRC or IEND) is still decoded, as Pillow decodes it (it stops reading once the
 * last row is out). */
static void gp_png_count(png_structp p, png_row_infop ri, png_bytep data) {
    gp_png *x = (gp_png *)png_get_error_ptr(p);
    (void)ri, (void)data;
    x->rows_done++;
}

static void gp_png_error(png_structp p, png_const_charp m) {
    gp_png *x = (gp_png *)png_get_error_ptr(p);
    snprintf(x->msg, sizeof x->msg, "%s", m);
    longjmp(x->jb, 1);
}

static void gp_png_warning(png_structp p, png_const_charp m) { (void)p, (void)m; }

static void gp_png_read(png_structp p, png_bytep out, png_size_t n) {
    gp_png *x = (gp_png *)png_get_io_ptr(p);
    if (n > x->n - x->pos) {
        x->eof = 1;
        png_error(p, "premature end of data");
    }
    memcpy(out, x->data + x->pos, n);
    x->pos += n;
}

#define L24(r, g, b) ((r) * 19595 + (g) * 38470 + (b) * 7471 + 0x8000)

typedef struct {
    int color_type, mode, w;
    uint8_t pal[256][4]; /* RGBA */
    int trns_gray;       /* -1: none */
    int trns_r, trns_g, trns_b;
} gp_conv;

static void gp_png_row(const gp_conv *cv, uint8_t *out, const uint8_t *in) {
    int x, w = cv->w, mode = cv->mode;
    for (x = 0; x < w; x++) {
        int r, g, b, a = 255;
        switch (cv->color_type) {
            case PNG_COLOR_TYPE_GRAY:
                r = g = b = in[x];
                if (cv->trns_gray >= 0 && in[x] == cv->trns_gray) a = 0;
                break;
            case PNG_COLOR_TYPE_GRAY_ALPHA:
                r = g = b = in[2 * x];
                a = in[2 * x + 1];
                break;
            case PNG_COLOR_TYPE_PALETTE: {
                const uint8_t *p = cv->pal[in[x]];
                r = p[0], g = p[1], b = p[2], a = p[3];
                break;
            }
            case PNG_COLOR_TYPE_RGB:
                r = in[3 * x], g = in[3 * x + 1], b = in[3 * x + 2];
                if (cv->trns_r >= 0 && r == cv->trns_r && g == cv->trns_g && b == cv->trns_b) a = 0;
                break;
            default: /* RGBA */
                r = in[4 * x], g = in[4 * x + 1], b = in[4 * x + 2], a = in[4 * x + 3];
        }
        if (mode == 1) {
            /* Pillow: L and LA keep L; everything else L24 */
            if (cv->color_type == PNG_COLOR_TYPE_GRAY || cv->color_type == PNG_COLOR_TYPE_GRAY_ALPHA)
                *out++ = (uint8_t)r;
            else
                *out++ = (uint8_t)(L24(r, g, b) >> 16);
        } else {
            *out++ = (uint8_t)r;
            *out++ = (uint8_t)g;
            *out++ = (uint8_t)b;
            if (mode == 2) *out++ = (uint8_t)a;
        }
    }
}

int gp_png_decode(const uint8_t *data, size_t n, gp_png_request *r, uint8_t *dst, size_t dst_len, size_t stride) {
    gp_png *x = (gp_png *)calloc(1, sizeof(gp_png));
    gp_conv *cv = (gp_conv *)calloc(1, sizeof(gp_conv));
    png_uint_32 w, h, y;
    int depth, ct, interlace, ch, rc, i;
    size_t rowbytes;
    if (!x || !cv) {
        free(x), free(cv);
        snprintf(r->msg, GP_MSG_LEN, "out of memory");
        return GP_ERR_NOMEM;
    }
    x->data = data, x->n = n;
    x->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, x, gp_png_error, gp_png_warning);
    if (x->png) x->info = png_create_info_struct(x->png);
    if (!x->png || !x->info) {
        png_destroy_read_struct(&x->png, NULL, NULL);
        free(x), free(cv);
        snprintf(r->msg, GP_MSG_LEN, "out of memory");
        return GP_ERR_NOMEM;
    }
    if (setjmp(x->jb)) {
        if (x->eof && x->rows_expected > 0 && x->rows_done == x->rows_expected) {
            /* every row is out (libpng failed while finishing the stream): Pillow's success */
            if (x->interlaced) {
                for (y = 0; y < x->h; y++) gp_png_row(cv, dst + (size_t)y * stride, x->rows[y]);
            } else {
                gp_png_row(cv, dst + (size_t)(x->h - 1) * stride, x->buf);
            }
            rc = GP_OK;
            goto done;
        }
        if (x->eof)
            snprintf(r->msg, GP_MSG_LEN, "truncated PNG: the data ends before the image does");
        else
            snprintf(r->msg, GP_MSG_LEN, "corrupt or unsupported PNG: %s", x->msg);
        rc = x->eof ? GP_ERR_TRUNCATED : GP_ERR_DATA;
        goto done;
    }
    png_set_read_fn(x->png, x, gp_png_read);
    png_read_info(x->png, x->info);
    png_get_IHDR(x->png, x->info, &w, &h, &depth, &ct, &interlace, NULL, NULL);
    if (r->max_pixels > 0 && (long long)w * (long long)h > r->max_pixels) {
        snprintf(r->msg, GP_MSG_LEN, "the image is %ux%u (%lld pixels), over the limit of %lld pixels", w, h,
                 (long long)w * (long long)h, r->max_pixels);
        rc = GP_ERR_TOO_LARGE;
        goto done;
    }
    if (depth == 16) {
        snprintf(r->msg, GP_MSG_LEN, "16-bit PNG is not supported (8-bit and below only)");
        rc = GP_ERR_DATA;
        goto done;
    }
    ch = r->mode == 1 ? 1 : r->mode == 2 ? 4 : 3;
    if (h > 0 && (stride < (size_t)w * ch || dst_len < (size_t)(h - 1) * stride + (size_t)w * ch)) {
        snprintf(r->msg, GP_MSG_LEN, "internal: destination too small for %ux%ux%d", h, w, ch);
        rc = GP_ERR_DATA;
        goto done;
    }
    cv->color_type = ct, cv->mode = r->mode, cv->w = (int)w;
    cv->trns_gray = cv->trns_r = -1;
    if (depth < 8) {
        if (ct == PNG_COLOR_TYPE_GRAY)
            png_set_expand_gray_1_2_4_to_8(x->png);
        else
            png_set_packing(x->png);
    }
    if (ct == PNG_COLOR_TYPE_PALETTE) {
        png_colorp pal = NULL;
        int npal = 0;
        png_bytep ta = NULL;
        int nt = 0;
        png_color_16p tc = NULL;
        png_get_PLTE(x->png, x->info, &pal, &npal);
        for (i = 0; i < npal && i < 256; i++) {
            cv->pal[i][0] = pal[i].red, cv->pal[i][1] = pal[i].green, cv->pal[i][2] = pal[i].blue;
        }
        for (i = 0; i < 256; i++) cv->pal[i][3] = 255;
        if (png_get_valid(x->png, x->info, PNG_INFO_tRNS)) {
            png_get_tRNS(x->png, x->info, &ta, &nt, &tc);
            for (i = 0; i < nt && i < 256; i++) cv->pal[i][3] = ta[i];
        }
    } else if (png_get_valid(x->png, x->info, PNG_INFO_tRNS)) {
        png_bytep ta = NULL;
        int nt = 0;
        png_color_16p tc = NULL;
        png_get_tRNS(x->png, x->info, &ta, &nt, &tc);
        if (tc && ct == PNG_COLOR_TYPE_GRAY) cv->trns_gray = tc->gray;
        if (tc && ct == PNG_COLOR_TYPE_RGB) cv->trns_r = tc->red, cv->trns_g = tc->green, cv->trns_b = tc->blue;
    }
    x->h = h;
    if (interlace != PNG_INTERLACE_NONE) {
        int pass;
        png_set_interlace_handling(x->png);
        x->interlaced = 1;
        for (pass = 0; pass < 7; pass++)
            if (PNG_PASS_COLS(w, pass) > 0) x->rows_expected += (long)PNG_PASS_ROWS(h, pass);
    } else {
        x->rows_expected = (long)h;
    }
    png_set_read_user_transform_fn(x->png, gp_png_count);
    png_read_update_info(x->png, x->info);
    rowbytes = png_get_rowbytes(x->png, x->info);
    if (interlace != PNG_INTERLACE_NONE) {
        x->buf = (uint8_t *)malloc(rowbytes * (size_t)h + 1);
        x->rows = (png_bytep *)malloc(sizeof(png_bytep) * ((size_t)h + 1));
        if (!x->buf || !x->rows) {
            snprintf(x->msg, sizeof x->msg, "out of memory");
            longjmp(x->jb, 1);
        }
        for (y = 0; y < h; y++) x->rows[y] = x->buf + (size_t)y * rowbytes;
        png_read_image(x->png, x->rows);
        for (y = 0; y < h; y++) gp_png_row(cv, dst + (size_t)y * stride, x->buf + (size_t)y * rowbytes);
    } else {
        x->buf = (uint8_t *)malloc(rowbytes + 1);
        if (!x->buf) {
            snprintf(x->msg, sizeof x->msg, "out of memory");
            longjmp(x->jb, 1);
        }
        for (y = 0; y < h; y++) {
            png_read_row(x->png, x->buf, NULL);
            gp_png_row(cv, dst + (size_t)y * stride, x->buf);
        }
    }
    rc = GP_OK;
done:
    png_destroy_read_struct(&x->png, &x->info, NULL);
    free(x->buf);
    free(x->rows);
    free(x);
    free(cv);
    return rc;
}
