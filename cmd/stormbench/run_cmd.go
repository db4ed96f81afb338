package main

import "context"

func runRun(ctx context.Context, env *cmdEnv, args []string) error { return usagef("run: not yet") }
