#ifndef LIVEPUSH_CFREETYPE_SHIM_H
#define LIVEPUSH_CFREETYPE_SHIM_H
// Text overlays: fontconfig finds the font file, FreeType renders its glyphs.
#include <ft2build.h>
#include FT_FREETYPE_H
#include <fontconfig/fontconfig.h>
#endif
