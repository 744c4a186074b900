#ifndef COUNTERSIGN_CLDAP_H
#define COUNTERSIGN_CLDAP_H

// OpenLDAP's client library without its deprecated interfaces (ldap_bind_s, ldap_search_s and
// the like), which take no controls and no timeouts.
#define LDAP_DEPRECATED 0
#include <ldap.h>
#include <lber.h>
// ldap_init_fd: a handle on a socket the caller connected.
#include <openldap.h>
#include <sys/time.h>

// Constants that ldap.h writes as casts or pointer expressions, which Swift does not import.
static const int cldap_scope_base = LDAP_SCOPE_BASE;
static const int cldap_scope_one_level = LDAP_SCOPE_ONELEVEL;
static const int cldap_scope_subtree = LDAP_SCOPE_SUBTREE;
static const int cldap_tls_protocol_1_2 = LDAP_OPT_X_TLS_PROTOCOL_TLS1_2;

// ldap_set_option takes a pointer to a value whose type depends on the option; these give each
// kind of value a typed entry.
static inline int cldap_set_int(LDAP *ld, int option, int value) {
    return ldap_set_option(ld, option, &value);
}

static inline int cldap_set_timeval(LDAP *ld, int option, long seconds, long microseconds) {
    struct timeval value = { .tv_sec = seconds, .tv_usec = microseconds };
    return ldap_set_option(ld, option, &value);
}

static inline int cldap_set_string(LDAP *ld, int option, const char *value) {
    return ldap_set_option(ld, option, value);
}

// LDAP_OPT_OFF is a null pointer: the boolean options are off when given NULL.
static inline int cldap_set_off(LDAP *ld, int option) {
    return ldap_set_option(ld, option, LDAP_OPT_OFF);
}

// The handle's last diagnostic message, owned by the caller (freed with ldap_memfree); NULL
// when there is none.
static inline char *cldap_diagnostic_message(LDAP *ld) {
    char *message = NULL;
    ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &message);
    return message;
}

#endif
