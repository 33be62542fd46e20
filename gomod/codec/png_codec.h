/* The C side of gomod/codec's PNG decoder: libpng, errors caught with setjmp/longjmp in C. */
#ifndef GOPREP_CODEC_PNG_H
#define GOPREP_CODEC_PNG_H

#include <stddef.h>
#include <stdint.h>

#include "jpeg.h" /* GP_OK, GP_ERR_*, GP_MSG_LEN */

typedef struct {
    int mode;             /* 0 RGB, 1 Gray, 2 RGBA */
    long long max_pixels; /* 0: no limit */
    char msg[GP_MSG_LEN];
} gp_png_request;

int gp_png_decode(const uint8_t *data, size_t n, gp_png_request *r, uint8_t *dst, size_t dst_len, size_t stride);
const char *gp_png_version(void);

#endif
