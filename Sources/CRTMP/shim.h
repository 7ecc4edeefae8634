#ifndef LIVEPUSH_CRTMP_SHIM_H
#define LIVEPUSH_CRTMP_SHIM_H
#include <librtmp/rtmp.h>
#include <librtmp/log.h>
#include <sys/socket.h>
#include <sys/time.h>
#endif
