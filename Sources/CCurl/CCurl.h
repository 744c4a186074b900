#ifndef COUNTERSIGN_CCURL_H
#define COUNTERSIGN_CCURL_H

// libcurl's easy interface, for its SMTP client (the mail outbox). curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call: these give each kind of value a
// typed entry.
#include <curl/curl.h>

static inline CURLcode ccurl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

// A blob option (CURLOPT_CAINFO_BLOB): libcurl keeps its own copy of the bytes.
static inline CURLcode ccurl_set_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { .data = (void *)data, .len = length, .flags = CURL_BLOB_COPY };
    return curl_easy_setopt(handle, option, &blob);
}

static inline CURLcode ccurl_set_read_function(CURL *handle, curl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

static inline CURLcode ccurl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// The value of CURL_ERROR_SIZE, the size of the buffer CURLOPT_ERRORBUFFER writes.
static const size_t ccurl_error_size = CURL_ERROR_SIZE;

#endif
