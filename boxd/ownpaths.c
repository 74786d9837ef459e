/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ownpaths.c — the paths docs/box.ini.5.md [agent.filesystem] treats specially, as
 * boxd sees them: box's own directories (this box's state dir, the owner's
 * default state base ~/.local/state/box and $XDG_STATE_HOME/box of an
 * embedded boxd, /var/lib/box, the runtime base), the places of sockets that
 * drive boxd or the user's session (the service socket, /run/box,
 * /run/user/UID, an embedded boxd's $XDG_RUNTIME_DIR, the runtime base where
 * embedded boxds listen) and the credential stores of the owner's home.
 *
 * A grant inside an own directory, or containing a socket's place, is refused
 * (plan_recheck); an own directory or a credential store strictly inside a
 * grant is masked (box-recheck finds which exist; plan_build masks them).
 * boxctl makes the same refusals at load, but boxd trusts nothing it sends.
 * Trusts: boxd's own environment and the owner's passwd entry; pure strings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "path.h"

static const char *const credential_stores[] = { ".ssh",    ".aws",  ".gnupg",	      ".netrc",
						 ".docker", ".kube", ".config/gcloud" };

static void
add(struct own_path *v, size_t *n, size_t cap, char *path, const char *what, bool *oom)
{
	if (!path) {
		*oom = true;
		return;
	}
	if (*n >= cap || !path_is_clean_absolute(path)) {
		free(path);
		return;
	}
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i].path, path) == 0) {
			free(path);
			return;
		}
	v[(*n)++] = (struct own_path){ path, what };
}


int
own_paths_build(const struct box *b, const char *state_dir, struct own_paths *o)
{
	const struct boxd *d = b->d;
	const char *xdg_state = d->embedded ? getenv("XDG_STATE_HOME") : NULL;
	const char *xdg_run = d->embedded ? getenv("XDG_RUNTIME_DIR") : NULL;
	const char *sock = getenv("BOX_SOCKET");
	const char *home = b->owner.home;
	bool oom = false;
	char uid[16];

	memset(o, 0, sizeof(*o));
#define OWN(p, w) add(o->own, &o->n_own, ELEMENTSOF(o->own), (p), (w), &oom)
#define SOCK(p, w) add(o->sockets, &o->n_sockets, ELEMENTSOF(o->sockets), (p), (w), &oom)
	if (state_dir)
		OWN(strdup(state_dir), "this box's state dir");
	if (xdg_state && xdg_state[0] == '/' && b->owner.uid == getuid())
		OWN(path_join(xdg_state, "box"), "box's state dirs");
	if (home && home[0] == '/' && strcmp(home, "/") != 0)
		OWN(path_join(home, ".local/state/box"), "box's state dirs");
	OWN(strdup("/var/lib/box"), "box's state dirs");
	if (d->runtime_base)
		OWN(strdup(d->runtime_base), "the box runtime base");

	if (d->service_path)
		SOCK(strdup(d->service_path), "boxd's service socket");
	if (sock && sock[0] == '/')
		SOCK(strdup(sock), "boxd's service socket");
	SOCK(strdup("/run/box/boxd.sock"), "boxd's service socket");
	SOCK(strdup("/run/box"), "boxd's runtime dir");
	snprintf(uid, sizeof(uid), "%u", (unsigned)b->owner.uid);
	SOCK(path_join("/run/user", uid),
	     "the user's runtime dir: session bus, ssh-agent, systemd");
	if (xdg_run && xdg_run[0] == '/' && b->owner.uid == getuid())
		SOCK(strdup(xdg_run), "the user's runtime dir: session bus, ssh-agent, systemd");
	/* Every embedded boxd listens in BASE/ID: a grant around BASE is refused, not masked. */
	if (d->runtime_base)
		SOCK(strdup(d->runtime_base), "the box runtime base: embedded boxd sockets");
#undef OWN
#undef SOCK
	for (size_t i = 0; home && home[0] == '/' && i < ELEMENTSOF(credential_stores); i++)
		add(o->stores, &o->n_stores, ELEMENTSOF(o->stores),
		    path_join(home, credential_stores[i]), "credential store", &oom);
	if (oom) {
		own_paths_clear(o);
		return -ENOMEM;
	}
	return 0;
}

void
own_paths_clear(struct own_paths *o)
{
	for (size_t i = 0; i < o->n_own; i++)
		free(o->own[i].path);
	for (size_t i = 0; i < o->n_sockets; i++)
		free(o->sockets[i].path);
	for (size_t i = 0; i < o->n_stores; i++)
		free(o->stores[i].path);
	memset(o, 0, sizeof(*o));
}
