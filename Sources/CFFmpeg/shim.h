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
static inline int livepush_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int livepush_av_disposition_attached_pic(void) { return AV_DISPOSITION_ATTACHED_PIC; }
static inline int livepush_av_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int livepush_av_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline AVRational livepush_av_time_base_q(void) { AVRational r = { 1, AV_TIME_BASE }; return r; }
/// Writes FFmpeg's message for `errnum` into `buf` (NUL-terminated).
static inline void livepush_av_strerror(int errnum, char *buf, size_t size) { av_strerror(errnum, buf, size); }
#endif
