package testutil

import (
	"net/http"
	"testing"
)

func TestStartRegistry(t *testing.T) {
	r := StartRegistry(t)
	resp, err := http.Get("http://" + r.Host + "/v2/_catalog")
	if err != nil {
		t.Fatalf("GET /v2/_catalog: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/_catalog = %d, want 200; log: %s", resp.StatusCode, r.Log())
	}
	if got := resp.Header.Get("Docker-Distribution-Api-Version"); got != "registry/2.0" {
		t.Errorf("API version header = %q, want registry/2.0", got)
	}
}
