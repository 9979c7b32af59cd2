package main

import (
	"context"
	"io"
)

// The run* helpers run one subcommand through the whole command line (flag
// parsing, exit status), as a user typing "tbprobe SUBCOMMAND ARGS..." would.

func runMate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, append([]string{"mate"}, args...), stdin, stdout, stderr)
}

func runGeister(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, append([]string{"geister"}, args...), stdin, stdout, stderr)
}

func runGeisterBuild(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, append([]string{"geister", "build"}, args...), stdin, stdout, stderr)
}

func runGeisterPlay(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, append([]string{"geister", "play"}, args...), stdin, stdout, stderr)
}

func runGeisterServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, append([]string{"geister", "serve"}, args...), stdin, stdout, stderr)
}
