#ifndef LIVEPUSH_CSRT_SHIM_H
#define LIVEPUSH_CSRT_SHIM_H
#include <sys/socket.h>
#include <netinet/in.h>
#include <srt/srt.h>
#endif
