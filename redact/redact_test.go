package redact

import (
	"strings"
	"testing"
)

// Every credential a MongoDB URI can carry is hidden, in the user info and
// in the options, whatever their case; other options stay readable.
func TestURIHidesCredentialOptions(t *testing.T) {
	for _, tc := range []struct {
		uri, want string
		secrets   []string // each must be among the secrets returned
	}{
		{"mongodb://h/?tls=true&tlsCertificateKeyFilePassword=S3CRET1", "mongodb://h/?tls=true&tlsCertificateKeyFilePassword=xxxxx", []string{"S3CRET1"}},
		{"mongodb://u:PW1@h1,h2/db?sslClientCertificateKeyPassword=S3CRET2&replicaSet=r",
			"mongodb://u:xxxxx@h1,h2/db?sslClientCertificateKeyPassword=xxxxx&replicaSet=r", []string{"PW1", "S3CRET2"}},
		{"mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:T0KEN%2Fx,SERVICE_NAME:s",
			"mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=xxxxx", []string{"T0KEN/x", "AWS_SESSION_TOKEN:T0KEN%2Fx,SERVICE_NAME:s"}},
		{"mongodb://h/?SSLPEMKEYPASSWORD=S3CRET3;proxyPassword=S3CRET4;appName=a", "mongodb://h/?SSLPEMKEYPASSWORD=xxxxx;proxyPassword=xxxxx;appName=a", []string{"S3CRET3", "S3CRET4"}},
		{"mongodb+srv://u:p%2Fw@c.example.net/?mySecret=S3&apiToken=T4", "mongodb+srv://u:xxxxx@c.example.net/?mySecret=xxxxx&apiToken=xxxxx", []string{"p%2Fw", "p/w", "S3", "T4"}},
		// An unescaped '/' or '?' in the password is still hidden.
		{"mongodb://u:a/b@h/", "mongodb://u:xxxxx@h/", []string{"a/b"}},
		{"mongodb://u:a?b@h/?appName=x", "mongodb://u:xxxxx@h/?appName=x", []string{"a?b"}},
		{"mongodb://h/?appName=me@home&w=majority", "mongodb://h/?appName=me@home&w=majority", nil},
	} {
		got, secrets := URI(tc.uri)
		if got != tc.want {
			t.Errorf("URI(%q) = %q, want %q", tc.uri, got, tc.want)
		}
		for _, s := range tc.secrets {
			if strings.Contains(got, s) || !strings.Contains(strings.Join(secrets, "\n"), s) {
				t.Errorf("URI(%q): secret %q shown or not returned: %q %q", tc.uri, s, got, secrets)
			}
		}
	}
}
