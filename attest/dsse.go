package attest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	ita "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// PayloadType is the DSSE payload type of an in-toto statement.
const PayloadType = "application/vnd.in-toto+json"

// ErrSignature is wrapped when no signature of an envelope verifies with
// the key: another key signed it, or the statement changed after signing.
var ErrSignature = errors.New("the signature does not verify")

// Sign encodes st canonically (EncodeStatement) and signs it: one DSSE
// envelope, as one line of JSON and a newline. That is a line of the
// in-toto bundle format (.intoto.jsonl) and the envelope that
// `cosign verify-blob-attestation --signature` reads. The payload is the
// same bytes for the same statement; the signature is the same only for
// keys whose signatures are deterministic (Ed25519, RSA PKCS#1 v1.5), not
// ECDSA's (cosign's default), which are randomized.
func (s *Signer) Sign(ctx context.Context, st *ita.Statement) ([]byte, error) {
	payload, err := EncodeStatement(st)
	if err != nil {
		return nil, err
	}
	es, err := dsse.NewEnvelopeSigner(&sigdsse.SignerAdapter{SignatureSigner: s.sv, Pub: s.Public()})
	if err != nil {
		return nil, fmt.Errorf("signing with %s: %w", s.Path, err)
	}
	env, err := es.SignPayload(ctx, PayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("signing with %s: %w", s.Path, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, fmt.Errorf("encoding the DSSE envelope: %w", err)
	}
	return b.Bytes(), nil
}

// EncodeStatement validates st (the in-toto bindings' Validate) and
// encodes it as canonical JSON: protojson's field names, object keys
// sorted, no insignificant space, no HTML escaping. protojson itself
// promises no stable bytes (it varies its spacing between builds), so its
// output is decoded and encoded again.
func EncodeStatement(st *ita.Statement) ([]byte, error) {
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("encoding the in-toto statement: %w", err)
	}
	return canonicalJSON(st)
}

// canonicalJSON is m as protojson sees it, re-encoded with sorted keys.
func canonicalJSON(m proto.Message) ([]byte, error) {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Struct converts a proto message (a predicate such as SLSA provenance)
// into the Struct a statement carries, through its JSON.
func Struct(m proto.Message) (*structpb.Struct, error) {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return s, nil
}

// FromStruct decodes a statement's predicate into m, refusing fields m
// does not have.
func FromStruct(s *structpb.Struct, m proto.Message) error {
	raw, err := protojson.Marshal(s)
	if err != nil {
		return err
	}
	return protojson.Unmarshal(raw, m)
}

// Verified is a statement whose envelope verified.
type Verified struct {
	Statement *ita.Statement
	// Payload is the statement's bytes as signed.
	Payload []byte
}

// Verify checks a DSSE envelope (one JSON object, as Sign writes it;
// display names its file in messages) with v and returns the in-toto
// statement it carries, validated. Any signature of the envelope made by
// v's key is enough.
func (v *Verifier) Verify(ctx context.Context, display string, envelope []byte) (*Verified, error) {
	env, err := ParseEnvelope(display, envelope)
	if err != nil {
		return nil, err
	}
	ev, err := dsse.NewEnvelopeVerifier(&sigdsse.VerifierAdapter{SignatureVerifier: v.v, Pub: v.pub})
	if err != nil {
		return nil, fmt.Errorf("verifying %s: %w", display, err)
	}
	if _, err := ev.Verify(ctx, env); err != nil {
		return nil, fmt.Errorf("%s: %w with the public key %s: it was signed with another key, or changed after signing", display, ErrSignature, v.Path)
	}
	payload, err := env.DecodeB64Payload()
	if err != nil {
		return nil, fmt.Errorf("%s: the payload is not base64: %w", display, err)
	}
	st := &ita.Statement{}
	if err := protojson.Unmarshal(payload, st); err != nil {
		return nil, fmt.Errorf("%s: the signed payload is not an in-toto statement: %v", display, oneLine(err))
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("%s: the signed in-toto statement is invalid: %w", display, err)
	}
	return &Verified{Statement: st, Payload: payload}, nil
}

// ParseEnvelope decodes a DSSE envelope strictly: one JSON object with
// the envelope's fields and no others, the in-toto payload type, a
// payload and at least one signature.
func ParseEnvelope(display string, data []byte) (*dsse.Envelope, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var env dsse.Envelope
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("%s: not a DSSE envelope: %v", display, oneLine(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more than one DSSE envelope: a statement file holds one", display)
	}
	switch {
	case env.PayloadType != PayloadType:
		return nil, fmt.Errorf("%s: payload type %q, not an in-toto statement (%s)", display, env.PayloadType, PayloadType)
	case env.Payload == "":
		return nil, fmt.Errorf("%s: the DSSE envelope has no payload", display)
	case len(env.Signatures) == 0:
		return nil, fmt.Errorf("%s: the DSSE envelope is not signed", display)
	}
	return &env, nil
}
