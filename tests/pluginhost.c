/* A program with plugins: dlopens the libraries named before "--reload"
 * (what a large program has loaded for other things), then PLUGIN with
 * RTLD_LOCAL (RTLD_GLOBAL when GLOBAL is set in the environment), calls
 * its check() and unloads it. With --reload it then loads the libraries
 * named after "--reload" (the program goes on loading things), and loads
 * and checks the plugin again: a library the plugin brought may come back
 * elsewhere.
 * usage: pluginhost PLUGIN [LIB..] [--reload LIB..]
 * Prints "check=N" per check, N what check() returned. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(const char *plugin)
{
    void *p = dlopen(plugin, RTLD_NOW | (getenv("GLOBAL") != NULL ? RTLD_GLOBAL : RTLD_LOCAL));
    if (p == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        return -1;
    }
    int (*check)(void) = (int (*)(void))dlsym(p, "check");
    printf("check=%d\n", check());
    fflush(stdout);
    dlclose(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--reload") != 0; i++)
        if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) == NULL)
            fprintf(stderr, "%s\n", dlerror());
    if (run(argv[1]) != 0)
        return 2;
    if (i == argc)
        return 0;
    for (i++; i < argc; i++)
        if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) == NULL)
            fprintf(stderr, "%s\n", dlerror());
    return run(argv[1]) != 0 ? 2 : 0;
}
