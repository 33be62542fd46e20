/* The C side of gomod/codec's JPEG decoder: libjpeg-turbo through the libjpeg API. Every libjpeg
 * error is caught here (setjmp/longjmp never crosses into Go) and returned as a status and a message. */
#ifndef GOPREP_CODEC_JPEG_H
#define GOPREP_CODEC_JPEG_H

#include <stddef.h>
#include <stdint.h>

#define GP_MSG_LEN 256

enum { GP_OK = 0, GP_ERR_DATA = 1, GP_ERR_TRUNCATED = 2, GP_ERR_TOO_LARGE = 3, GP_ERR_NOMEM = 4 };

typedef struct {
    int width, height, components, progressive;
    int color_space; /* libjpeg's J_COLOR_SPACE guess for the file */
    char msg[GP_MSG_LEN];
} gp_jpeg_header;

typedef struct {
    int mode;  /* 0 RGB, 1 Gray, 2 RGBA (gomod/codec's Mode) */
    int scale; /* 1, 2, 4, 8 */
    int y0, y1, x0, x1; /* window of the scaled image; y1 == 0: the whole image */
    long long max_pixels; /* 0: no limit */
    int out_width, out_height; /* set by gp_jpeg_decode: the scaled size */
    char msg[GP_MSG_LEN];
} gp_jpeg_request;

int gp_jpeg_probe(const uint8_t *data, size_t n, gp_jpeg_header *h);
int gp_jpeg_decode(const uint8_t *data, size_t n, gp_jpeg_request *r, uint8_t *dst, size_t dst_len,
                   size_t stride);
const char *gp_jpeg_version(void);

#endif
