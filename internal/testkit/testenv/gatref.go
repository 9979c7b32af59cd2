package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// GATReference compiles the reference GAT client (RandomPlayer on
// BasePlayer, from a checkout of miyo/geister_server.java named by
// TBFS_GAT_REFERENCE) into a temporary directory and returns it as a Java
// class path. The client needs only the reference's utils and player
// packages and the server's GameServer (RandomPlayer imports the server
// package), none of which depend on a library outside the JDK; nothing of
// the reference is kept. The test is skipped when TBFS_GAT_REFERENCE is
// unset (CI has no copy: the reference is never committed) and, through
// Tool, when it is set but there is no JDK.
func GATReference(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TBFS_GAT_REFERENCE")
	if dir == "" {
		t.Skip("TBFS_GAT_REFERENCE (a checkout of miyo/geister_server.java) is not set")
	}
	javac := Tool(t, "javac")
	Tool(t, "java")
	src := filepath.Join(dir, "src", "main", "java", "net", "wasamon", "geister")
	files, err := filepath.Glob(filepath.Join(src, "utils", "*.java"))
	if err != nil || len(files) == 0 {
		t.Fatalf("TBFS_GAT_REFERENCE=%s holds no reference sources (%v)", dir, err)
	}
	for _, f := range []string{"player/BasePlayer.java", "player/RandomPlayer.java", "server/GameServer.java"} {
		files = append(files, filepath.Join(src, filepath.FromSlash(f)))
	}
	out := t.TempDir()
	cmd := exec.Command(javac, append([]string{"-nowarn", "-d", out}, files...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	return out
}

// GATReferenceClient is the command that runs the reference's RandomPlayer
// (class path cp, from GATReference) against a GAT server's port on
// 127.0.0.1, killed when ctx ends. It prints the exchange and ends with
// "won", "lost" or "draw".
func GATReferenceClient(ctx context.Context, cp, port string) *exec.Cmd {
	return exec.CommandContext(ctx, "java", "-cp", cp, "net.wasamon.geister.player.RandomPlayer", "127.0.0.1", port)
}
