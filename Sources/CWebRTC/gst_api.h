/* The part of GLib, GObject and GStreamer the shim uses, declared here instead of included, so
 * that LivePush builds without GStreamer's dev packages and links none of its libraries:
 * every function is a pointer in `lp_gst`, filled by dlopen/dlsym at the first WHIP output
 * (gst_loader.c). Never include a GLib or GStreamer header next to this one.
 *
 * The objects are opaque pointers. The few structs the shim reads or writes are declared with
 * GStreamer 1.x's public layout, which its ABI keeps stable across 1.x (GstMiniObject,
 * GstBuffer's timestamps, GstMessage's type, GstWebRTCSessionDescription, GstSDPAttribute,
 * GArray, GError); checked against the 1.22 headers (offsetof) and asserted below for LP64.
 * The enum values are GStreamer's and GLib's, copied from the same headers. */
#ifndef LIVEPUSH_GST_API_H
#define LIVEPUSH_GST_API_H

#include <stddef.h>
#include <stdint.h>

typedef int gboolean;
typedef uintptr_t GType;
typedef uint32_t GQuark;
typedef uint64_t GstClockTime;
#define TRUE 1
#define FALSE 0

typedef struct _GObject GObject;
typedef struct _GParamSpec GParamSpec;
typedef struct _GValue GValue;
typedef struct _GstElement GstElement;
typedef struct _GstBin GstBin;
typedef struct _GstPad GstPad;
typedef struct _GstPadProbeInfo GstPadProbeInfo;
typedef struct _GstEvent GstEvent;
typedef struct _GstCaps GstCaps;
typedef struct _GstBus GstBus;
typedef struct _GstClock GstClock;
typedef struct _GstPromise GstPromise;
typedef struct _GstStructure GstStructure;
typedef struct _GstElementFactory GstElementFactory;
typedef struct _GstSDPMessage GstSDPMessage;
typedef struct _GstSDPMedia GstSDPMedia;
typedef struct _GstWebRTCRTPTransceiver GstWebRTCRTPTransceiver;
typedef struct _GstWebRTCRTPSender GstWebRTCRTPSender;
typedef struct _GstWebRTCDTLSTransport GstWebRTCDTLSTransport;
/* libnice's agent and candidate (ICE restart, ice_restart.c). */
typedef struct _NiceAgent NiceAgent;
typedef struct _NiceCandidate NiceCandidate;

/* ------------------------------------------------------------------ public layouts */

/* The first member of every GObject instance: its class, whose first member is its GType. */
typedef struct { void *g_class; } GTypeInstance;

typedef struct {
    GType type;
    int refcount, lockstate;
    unsigned flags;
    void *copy, *dispose, *free;
    unsigned priv_uint;
    void *priv_pointer;
} GstMiniObject;

typedef struct {
    GstMiniObject mini_object;
    void *pool;
    GstClockTime pts, dts, duration;
    uint64_t offset, offset_end;
} GstBuffer;

/* Only its head: the shim reads the type of a bus message. */
typedef struct {
    GstMiniObject mini_object;
    int type;
} GstMessage;

typedef struct {
    int type;
    GstSDPMessage *sdp;
} GstWebRTCSessionDescription;

typedef struct {
    char *key, *value;
} GstSDPAttribute;

typedef struct {
    char *data;
    unsigned len;
} GArray;

/* GLib's singly linked list (libnice's candidate lists). */
typedef struct _GSList {
    void *data;
    struct _GSList *next;
} GSList;

typedef struct {
    GQuark domain;
    int code;
    char *message;
} GError;

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
_Static_assert(sizeof(GstMiniObject) == 64, "GstMiniObject is 64 bytes on LP64 (1.x)");
_Static_assert(offsetof(GstBuffer, pts) == 72 && offsetof(GstBuffer, duration) == 88, "GstBuffer's timestamps");
_Static_assert(offsetof(GstMessage, type) == 64, "GstMessage's type");
_Static_assert(offsetof(GstWebRTCSessionDescription, sdp) == 8 && offsetof(GError, message) == 8, "layouts");
#endif

/* ------------------------------------------------------------------ constants */

#define G_TYPE_INT ((GType)(6 << 2))
#define G_TYPE_UINT ((GType)(7 << 2))
#define G_TYPE_INT64 ((GType)(10 << 2))
#define G_TYPE_UINT64 ((GType)(11 << 2))
#define G_TYPE_DOUBLE ((GType)(15 << 2))
#define G_TYPE_STRING ((GType)(16 << 2))

#define GST_SECOND ((int64_t)1000000000)
#define GST_MSECOND ((int64_t)1000000)
#define GST_CLOCK_TIME_NONE ((GstClockTime)-1)
enum { GST_FORMAT_TIME = 3 };
enum { GST_STATE_NULL = 1, GST_STATE_PLAYING = 4 };
enum { GST_STATE_CHANGE_FAILURE = 0 };
enum { GST_PAD_PROBE_TYPE_EVENT_UPSTREAM = 1 << 7 };
enum { GST_PAD_PROBE_OK = 1 };
enum { GST_BUS_DROP = 0 };
enum { GST_MESSAGE_ERROR = 1 << 1 };
enum { GST_FLOW_OK = 0 };
enum { GST_BUFFER_FLAG_DELTA_UNIT = 1 << 13 };
enum { GST_PROMISE_RESULT_REPLIED = 2 };
enum { GST_SDP_OK = 0 };
enum { GST_WEBRTC_SDP_TYPE_ANSWER = 3 };
enum { GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE = 2 };
enum { GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY = 2 };
enum { GST_WEBRTC_STATS_OUTBOUND_RTP = 3, GST_WEBRTC_STATS_REMOTE_INBOUND_RTP = 4 };

typedef void (*GCallback)(void);
typedef void (*GDestroyNotify)(void *data);
typedef int (*GstPadProbeCallback)(GstPad *pad, GstPadProbeInfo *info, void *user);
typedef int (*GstBusSyncHandler)(GstBus *bus, GstMessage *message, void *user);
typedef void (*GstPromiseChangeFunc)(GstPromise *promise, void *user);
typedef gboolean (*GstStructureForeachFunc)(GQuark field, const GValue *value, void *user);

/* ------------------------------------------------------------------ functions */

/* The libraries, in load order (a library's own dependencies come first). */
enum { LP_GLIB, LP_GOBJECT, LP_GST, LP_GSTAPP, LP_GSTSDP, LP_GSTVIDEO, LP_GSTRTP, LP_GSTWEBRTC, LP_NICE, LP_LIBRARY_COUNT };

/* X(library, return type, name, parameters): every function the shim calls. */
#define LP_GST_FUNCTIONS(X) \
    X(LP_GLIB, void, g_free, (void *memory)) \
    X(LP_GLIB, void, g_array_unref, (GArray *array)) \
    X(LP_GLIB, void, g_error_free, (GError *error)) \
    X(LP_GLIB, void, g_slist_free, (GSList *list)) \
    X(LP_GOBJECT, void, g_object_set, (void *object, const char *first, ...)) \
    X(LP_GOBJECT, void, g_object_get, (void *object, const char *first, ...)) \
    X(LP_GOBJECT, void, g_object_unref, (void *object)) \
    X(LP_GOBJECT, GParamSpec *, g_object_class_find_property, (void *object_class, const char *name)) \
    X(LP_GOBJECT, unsigned long, g_signal_connect_data, \
      (void *instance, const char *signal, GCallback handler, void *data, void *destroy, int flags)) \
    X(LP_GOBJECT, void, g_signal_emit_by_name, (void *instance, const char *signal, ...)) \
    X(LP_GOBJECT, const char *, g_type_name_from_instance, (GTypeInstance *instance)) \
    X(LP_GOBJECT, gboolean, g_type_check_value_holds, (const GValue *value, GType type)) \
    X(LP_GOBJECT, GType, g_error_get_type, (void)) \
    X(LP_GST, gboolean, gst_init_check, (int *argc, char ***argv, GError **error)) \
    X(LP_GST, GstElementFactory *, gst_element_factory_find, (const char *name)) \
    X(LP_GST, GstElement *, gst_element_factory_make, (const char *factory, const char *name)) \
    X(LP_GST, void, gst_object_unref, (void *object)) \
    X(LP_GST, void *, gst_object_ref_sink, (void *object)) \
    X(LP_GST, void, gst_mini_object_unref, (GstMiniObject *object)) \
    X(LP_GST, gboolean, gst_bin_add, (GstBin *bin, GstElement *element)) \
    X(LP_GST, void, gst_util_set_object_arg, (GObject *object, const char *name, const char *value)) \
    X(LP_GST, GstPad *, gst_element_get_static_pad, (GstElement *element, const char *name)) \
    X(LP_GST, unsigned long, gst_pad_add_probe, \
      (GstPad *pad, int mask, GstPadProbeCallback callback, void *data, GDestroyNotify destroy)) \
    X(LP_GST, GstEvent *, gst_pad_probe_info_get_event, (GstPadProbeInfo *info)) \
    X(LP_GST, gboolean, gst_element_link, (GstElement *source, GstElement *sink)) \
    X(LP_GST, gboolean, gst_element_link_many, (GstElement *first, GstElement *second, ...)) \
    X(LP_GST, GstElement *, gst_pipeline_new, (const char *name)) \
    X(LP_GST, GstBuffer *, gst_buffer_new_memdup, (const void *data, size_t size)) \
    X(LP_GST, GType, gst_buffer_get_type, (void)) \
    X(LP_GST, GstCaps *, gst_caps_new_simple, (const char *media_type, const char *field, ...)) \
    X(LP_GST, GstCaps *, gst_caps_from_string, (const char *text)) \
    X(LP_GST, GstBus *, gst_element_get_bus, (GstElement *element)) \
    X(LP_GST, void, gst_bus_set_sync_handler, (GstBus *bus, GstBusSyncHandler handler, void *data, GDestroyNotify notify)) \
    X(LP_GST, int, gst_element_set_state, (GstElement *element, int state)) \
    X(LP_GST, GstClock *, gst_element_get_clock, (GstElement *element)) \
    X(LP_GST, GstClockTime, gst_clock_get_time, (GstClock *clock)) \
    X(LP_GST, GstClockTime, gst_element_get_base_time, (GstElement *element)) \
    X(LP_GST, GstPromise *, gst_promise_new, (void)) \
    X(LP_GST, GstPromise *, gst_promise_new_with_change_func, (GstPromiseChangeFunc func, void *data, GDestroyNotify notify)) \
    X(LP_GST, int, gst_promise_wait, (GstPromise *promise)) \
    X(LP_GST, void, gst_promise_interrupt, (GstPromise *promise)) \
    X(LP_GST, const GstStructure *, gst_promise_get_reply, (GstPromise *promise)) \
    X(LP_GST, gboolean, gst_structure_get, (const GstStructure *structure, const char *first, ...)) \
    X(LP_GST, gboolean, gst_structure_has_field, (const GstStructure *structure, const char *field)) \
    X(LP_GST, gboolean, gst_structure_get_uint, (const GstStructure *structure, const char *field, unsigned *value)) \
    X(LP_GST, const GValue *, gst_structure_get_value, (const GstStructure *structure, const char *field)) \
    X(LP_GST, gboolean, gst_structure_foreach, (const GstStructure *structure, GstStructureForeachFunc func, void *data)) \
    X(LP_GST, const GstStructure *, gst_value_get_structure, (const GValue *value)) \
    X(LP_GST, GType, gst_structure_get_type, (void)) \
    X(LP_GSTAPP, int, gst_app_src_push_buffer, (GstElement *source, GstBuffer *buffer)) \
    X(LP_GSTSDP, char *, gst_sdp_message_as_text, (const GstSDPMessage *message)) \
    X(LP_GSTSDP, int, gst_sdp_message_new_from_text, (const char *text, GstSDPMessage **message)) \
    X(LP_GSTSDP, unsigned, gst_sdp_message_medias_len, (const GstSDPMessage *message)) \
    X(LP_GSTSDP, int, gst_sdp_message_free, (GstSDPMessage *message)) \
    X(LP_GSTSDP, const GstSDPMedia *, gst_sdp_message_get_media, (const GstSDPMessage *message, unsigned index)) \
    X(LP_GSTSDP, unsigned, gst_sdp_media_attributes_len, (const GstSDPMedia *media)) \
    X(LP_GSTSDP, const GstSDPAttribute *, gst_sdp_media_get_attribute, (const GstSDPMedia *media, unsigned index)) \
    X(LP_GSTSDP, int, gst_sdp_attribute_set, (GstSDPAttribute *attribute, const char *key, const char *value)) \
    X(LP_GSTSDP, int, gst_sdp_media_replace_attribute, (GstSDPMedia *media, unsigned index, GstSDPAttribute *attribute)) \
    X(LP_GSTSDP, int, gst_sdp_media_add_attribute, (GstSDPMedia *media, const char *key, const char *value)) \
    X(LP_GSTSDP, const char *, gst_sdp_media_get_media, (const GstSDPMedia *media)) \
    X(LP_GSTSDP, const char *, gst_sdp_media_get_attribute_val, (const GstSDPMedia *media, const char *key)) \
    X(LP_GSTRTP, void, gst_rtp_header_extension_set_id, (GstElement *extension, unsigned id)) \
    X(LP_GSTVIDEO, gboolean, gst_video_event_is_force_key_unit, (GstEvent *event)) \
    X(LP_GSTVIDEO, gboolean, gst_video_event_parse_upstream_force_key_unit, \
      (GstEvent *event, GstClockTime *running_time, gboolean *all_headers, unsigned *count)) \
    X(LP_GSTWEBRTC, GstWebRTCSessionDescription *, gst_webrtc_session_description_new, (int type, GstSDPMessage *sdp)) \
    X(LP_GSTWEBRTC, void, gst_webrtc_session_description_free, (GstWebRTCSessionDescription *description)) \
    X(LP_GSTWEBRTC, GType, gst_webrtc_session_description_get_type, (void)) \
    X(LP_GSTWEBRTC, GType, gst_webrtc_stats_type_get_type, (void)) \
    /* ICE restart: webrtcbin 1.22 has none, so the shim restarts libnice's stream itself. */ \
    X(LP_NICE, gboolean, nice_agent_restart_stream, (NiceAgent *agent, unsigned stream_id)) \
    X(LP_NICE, gboolean, nice_agent_get_local_credentials, (NiceAgent *agent, unsigned stream_id, char **ufrag, char **pwd)) \
    X(LP_NICE, gboolean, nice_agent_set_remote_credentials, \
      (NiceAgent *agent, unsigned stream_id, const char *ufrag, const char *pwd)) \
    X(LP_NICE, GSList *, nice_agent_get_local_candidates, (NiceAgent *agent, unsigned stream_id, unsigned component_id)) \
    X(LP_NICE, char *, nice_agent_generate_local_candidate_sdp, (NiceAgent *agent, NiceCandidate *candidate)) \
    X(LP_NICE, void, nice_candidate_free, (NiceCandidate *candidate))

#define LP_GST_FIELD(library, result, name, parameters) result(*name) parameters;
typedef struct {
    LP_GST_FUNCTIONS(LP_GST_FIELD)
} lp_gst_functions;
#undef LP_GST_FIELD

/* Filled once by lp_gst_load; read only after it returned 0. */
extern lp_gst_functions lp_gst;

/* Loads the libraries, resolves every function, initializes GStreamer and checks the plugins a
 * WHIP output uses, once per process (later calls return the first call's result). 0 on
 * success, else -1 with *error (malloc'd) naming the missing file and its Debian package. */
int lp_gst_load(char **error);

/* GObject's macros, as functions of the table. */
#define G_OBJECT_GET_CLASS(object) (((GTypeInstance *)(object))->g_class)
#define G_CALLBACK(function) ((GCallback)(function))
#define g_signal_connect(instance, signal, handler, data) \
    lp_gst.g_signal_connect_data((instance), (signal), (handler), (data), NULL, 0)
#define gst_unref(object) lp_gst.gst_mini_object_unref((GstMiniObject *)(object))

#endif
