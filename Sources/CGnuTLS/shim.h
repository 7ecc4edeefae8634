#ifndef LIVEPUSH_CGNUTLS_SHIM_H
#define LIVEPUSH_CGNUTLS_SHIM_H
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#endif
