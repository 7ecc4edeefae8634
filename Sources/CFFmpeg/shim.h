#ifndef LIVEPUSH_CFFMPEG_SHIM_H
#define LIVEPUSH_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavutil/avutil.h>
#include <libavutil/opt.h>
#include <libavutil/channel_layout.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/imgutils.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

// Function-like macros do not import into Swift; these wrap the ones we need.
static inline int livepush_averror(int errnum) { return AVERROR(errnum); }
static inline int livepush_averror_eof(void) { return AVERROR_EOF; }
static inline int livepush_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t livepush_av_nopts_value(void) { return AV_NOPTS_VALUE; }
#endif
