/* Loads GStreamer at the first WHIP output, so that a process without one (push, channels,
 * serve) neither links nor maps it, and an app builds without GStreamer's dev packages. A
 * missing library, function or plugin is named with the Debian package that provides it. */
#define _GNU_SOURCE 1 /* asprintf, vasprintf */
#include "gst_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lp_gst_functions lp_gst;

/* Each library by its soname (what a Debian run-time package installs) with that package. */
static const struct {
    const char *file, *package;
} libraries[LP_LIBRARY_COUNT] = {
    [LP_GLIB] = {"libglib-2.0.so.0", "libglib2.0-0"},
    [LP_GOBJECT] = {"libgobject-2.0.so.0", "libglib2.0-0"},
    [LP_GST] = {"libgstreamer-1.0.so.0", "libgstreamer1.0-0"},
    [LP_GSTAPP] = {"libgstapp-1.0.so.0", "libgstreamer-plugins-base1.0-0"},
    [LP_GSTSDP] = {"libgstsdp-1.0.so.0", "libgstreamer-plugins-base1.0-0"},
    [LP_GSTVIDEO] = {"libgstvideo-1.0.so.0", "libgstreamer-plugins-base1.0-0"},
    [LP_GSTRTP] = {"libgstrtp-1.0.so.0", "libgstreamer-plugins-base1.0-0"},
    [LP_GSTWEBRTC] = {"libgstwebrtc-1.0.so.0", "libgstreamer-plugins-bad1.0-0"},
    /* webrtcbin's ICE agent (through gstreamer1.0-nice), called directly for ICE restarts. */
    [LP_NICE] = {"libnice.so.10", "libnice10"},
};

/* The elements a WHIP output's pipeline makes, or webrtcbin makes inside it, with the package
 * of their plugin: the registry finds plugins at run time, so each is asked for up front and
 * a missing one named, instead of a pipeline that fails later without saying why. */
static const struct {
    const char *factory, *package;
} plugins[] = {
    {"webrtcbin", "gstreamer1.0-plugins-bad"},   {"dtlssrtpenc", "gstreamer1.0-plugins-bad"},
    {"srtpenc", "gstreamer1.0-plugins-bad"},     {"nicesrc", "gstreamer1.0-nice"},
    {"nicesink", "gstreamer1.0-nice"},           {"rtpbin", "gstreamer1.0-plugins-good"},
    {"rtph264pay", "gstreamer1.0-plugins-good"}, {"rtpopuspay", "gstreamer1.0-plugins-good"},
    {"appsrc", "gstreamer1.0-plugins-base"},     {"capsfilter", "libgstreamer1.0-0"},
    /* Simulcast: the layers share one m-line through a funnel, each tagged with its RID and the mid. */
    {"rtpfunnel", "gstreamer1.0-plugins-good"},  {"rtphdrextstreamid", "gstreamer1.0-plugins-good"},
    {"rtphdrextmid", "gstreamer1.0-plugins-good"},
};

/* Test hook: LIVEPUSH_TEST_GSTREAMER_MISSING, a comma-separated list of the library files
 * (`libgstwebrtc-1.0.so.0`) and element names (`nicesrc`) above to take as missing, so the
 * error can be tested without uninstalling packages. A library in it is dlopen'ed under a path
 * that does not exist (the real failure path runs); an element in it is not looked up. Read
 * once, with the rest of the loading. */
static const char *test_missing;

static int taken_as_missing(const char *name) {
    if (!test_missing) return 0;
    size_t length = strlen(name);
    for (const char *at = test_missing; (at = strstr(at, name)) != NULL; at += length) {
        int starts = at == test_missing || at[-1] == ',';
        int ends = at[length] == '\0' || at[length] == ',';
        if (starts && ends) return 1;
    }
    return 0;
}

static char *load_error;

static void fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (vasprintf(&load_error, format, args) < 0) load_error = NULL;
    va_end(args);
    if (!load_error) load_error = strdup("GStreamer could not be loaded");
}

static int open_libraries(void **handles) {
    for (int i = 0; i < LP_LIBRARY_COUNT; i++) {
        char hooked[128];
        const char *file = libraries[i].file;
        if (taken_as_missing(file)) {
            snprintf(hooked, sizeof hooked, "/livepush-test-hook/missing/%s", file);
            file = hooked;
        }
        /* GLOBAL, as when they were linked: plugins the registry loads later see the same symbols.
         * Never closed: GStreamer keeps threads and types for the life of the process. */
        handles[i] = dlopen(file, RTLD_NOW | RTLD_GLOBAL);
        if (!handles[i]) {
            const char *why = dlerror();
            fail("%s is missing: install the Debian package %s; dlopen said: %s", libraries[i].file, libraries[i].package,
                 why ? why : "dlopen failed");
            return -1;
        }
    }
    return 0;
}

static int resolve_functions(void **handles) {
    void *symbol;
#define LP_GST_RESOLVE(library, result, name, parameters) \
    symbol = dlsym(handles[library], #name); \
    if (!symbol) { \
        fail("%s has no %s (too old): install the Debian package %s from GStreamer 1.20 or later", libraries[library].file, \
             #name, libraries[library].package); \
        return -1; \
    } \
    memcpy(&lp_gst.name, &symbol, sizeof symbol);
    LP_GST_FUNCTIONS(LP_GST_RESOLVE)
#undef LP_GST_RESOLVE
    return 0;
}

static int check_plugins(void) {
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++) {
        GstElementFactory *factory = taken_as_missing(plugins[i].factory) ? NULL : lp_gst.gst_element_factory_find(plugins[i].factory);
        if (!factory) {
            fail("GStreamer's element %s is missing: install the Debian package %s", plugins[i].factory, plugins[i].package);
            return -1;
        }
        lp_gst.gst_object_unref(factory);
    }
    return 0;
}

static void load_once(void) {
    test_missing = getenv("LIVEPUSH_TEST_GSTREAMER_MISSING");
    void *handles[LP_LIBRARY_COUNT] = {0};
    if (open_libraries(handles) || resolve_functions(handles)) return;
    GError *failure = NULL;
    if (!lp_gst.gst_init_check(NULL, NULL, &failure)) {
        fail("GStreamer could not start: %s", failure && failure->message ? failure->message : "gst_init failed");
        if (failure) lp_gst.g_error_free(failure);
        return;
    }
    check_plugins();
}

int lp_gst_load(char **error) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_once);
    if (!load_error) return 0;
    if (error) *error = strdup(load_error);
    return -1;
}
