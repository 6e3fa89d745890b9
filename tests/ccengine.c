/* ccengine: a dynamic ENGINE whose one method hands a client the
 * certificate and key in the PEM file named by $CCENGINE_PEM when a server
 * asks for one (SSL_CTX_set_client_cert_engine; tests/policyclient.c). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/engine.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>

static int load(ENGINE *e, SSL *ssl, STACK_OF(X509_NAME) *names, X509 **cert, EVP_PKEY **key,
                STACK_OF(X509) **other, UI_METHOD *ui, void *ui_data)
{
    (void)e, (void)ssl, (void)names, (void)other, (void)ui, (void)ui_data;
    const char *f = getenv("CCENGINE_PEM");
    FILE *fp = f != NULL ? fopen(f, "r") : NULL;
    if (fp == NULL)
        return 0;
    *cert = PEM_read_X509(fp, NULL, NULL, NULL);
    rewind(fp);
    *key = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
    fclose(fp);
    return *cert != NULL && *key != NULL;
}

static int bind_cc(ENGINE *e, const char *id)
{
    (void)id;
    return ENGINE_set_id(e, "ccengine") && ENGINE_set_name(e, "client certificate engine") &&
           ENGINE_set_load_ssl_client_cert_function(e, load);
}

IMPLEMENT_DYNAMIC_BIND_FN(bind_cc)
IMPLEMENT_DYNAMIC_CHECK_FN()
