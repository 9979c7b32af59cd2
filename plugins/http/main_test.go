package http_test

import (
	"testing"

	"github.com/tbfs/tbfs/plugins/internal/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m) }
