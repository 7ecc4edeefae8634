// Only there to carry GStreamer's pkg-config flags to the CWebRTC shim; Swift never imports
// GStreamer's headers (the shim's own header has no GStreamer types).
#ifndef LIVEPUSH_CGSTREAMER_SHIM_H
#define LIVEPUSH_CGSTREAMER_SHIM_H
#endif
