/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_replay.h — `boxctl policy replay` (policy_replay.c), dispatched
 * from `boxctl policy` (policy_cmd.c). Returns boxctl's exit status: 0 no
 * decision changes, 3 some do, 2 usage error, a policy that does not load
 * or a refused log line, 1 a log that cannot be read.
 */
#ifndef BOXCTL_POLICY_REPLAY_H
#define BOXCTL_POLICY_REPLAY_H

int cmd_policy_replay(int argc, char **argv);

#endif
