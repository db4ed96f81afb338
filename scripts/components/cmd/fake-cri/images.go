package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// The image service: images are made up on demand, with stable IDs and
// digests, and persisted with the rest of the state.

// imageIDFor derives a stable, containerd-looking image ID from a reference.
func imageIDFor(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// isImageID reports whether s has the form of an image ID rather than a
// reference.
func isImageID(s string) bool {
	return strings.HasPrefix(s, "sha256:") && len(s) == len("sha256:")+64
}

// repoDigestFor builds the "repo@digest" form containerd lists in
// RepoDigests, e.g. "nginx:1.25" -> "nginx@sha256:...".
func repoDigestFor(ref, id string) string {
	if strings.Contains(ref, "@") {
		return ref
	}
	repo := ref
	// A ':' after the last '/' is a tag; one before it is a registry port.
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + "@" + id
}

// imageRepoTag is the name containerd reports in ContainerStatus.Image.
func imageRepoTag(img *runtimeapi.Image) string {
	if len(img.RepoTags) > 0 {
		return img.RepoTags[0]
	}
	return img.GetSpec().GetImage()
}

// findImageLocked looks up an image by reference or ID, as containerd
// resolves either. The caller holds the ImageService lock.
func (s *criServer) findImageLocked(refOrID string) *runtimeapi.Image {
	if img, ok := s.ImageService.Images[refOrID]; ok {
		return img
	}
	for _, img := range s.ImageService.Images {
		if img.Id == refOrID {
			return img
		}
	}
	return nil
}

// ensureImage returns the image for refOrID, creating its record if it is a
// reference not seen before: on this fake node every image is "already
// pulled", so pods with imagePullPolicy Never or IfNotPresent start without
// a pull. An unknown image ID is not invented unless force is set.
// It persists nothing; callers do, when created is true.
func (s *criServer) ensureImage(refOrID string, force bool) (img *runtimeapi.Image, created bool) {
	s.ImageService.Lock()
	defer s.ImageService.Unlock()
	if img := s.findImageLocked(refOrID); img != nil {
		return img, false
	}
	if isImageID(refOrID) && !force {
		return nil, false
	}
	id := imageIDFor(refOrID)
	img = &runtimeapi.Image{
		Id:          id,
		RepoTags:    []string{refOrID},
		RepoDigests: []string{repoDigestFor(refOrID, id)},
		Size:        fakeImageSize,
		Spec:        &runtimeapi.ImageSpec{Image: refOrID},
	}
	s.ImageService.Images[refOrID] = img
	return img, true
}

// ImageStatus reports any image reference as present (see ensureImage). The
// first lookup of a reference creates and persists its record, so that it
// also shows up in ListImages and node status.
func (s *criServer) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, status.Error(codes.InvalidArgument, "image reference is required")
	}
	img, created := s.ensureImage(ref, false)
	if img == nil {
		return &runtimeapi.ImageStatusResponse{}, nil // unknown image ID: not present
	}
	if created {
		if err := s.persistAfter("ImageStatus"); err != nil {
			return nil, err
		}
		klog.V(2).InfoS("Image registered", "image", ref, "imageID", img.Id)
	}
	s.ImageService.Lock()
	out := proto.Clone(img).(*runtimeapi.Image)
	s.ImageService.Unlock()
	return &runtimeapi.ImageStatusResponse{Image: out}, nil
}

// PullImage always succeeds instantly and returns the image ID. It does not
// call the upstream PullImage, which would store an image whose ID is the
// reference and keep every request in an unbounded, unexported slice.
func (s *criServer) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, status.Error(codes.InvalidArgument, "image reference is required")
	}
	img, created := s.ensureImage(ref, true)
	if created {
		if err := s.persistAfter("PullImage"); err != nil {
			return nil, err
		}
	}
	klog.V(2).InfoS("PullImage", "image", ref, "imageID", img.Id)
	return &runtimeapi.PullImageResponse{ImageRef: img.Id}, nil
}

// RemoveImage deletes an image by reference or ID (the kubelet's image GC
// passes the ID, which the upstream fake, keyed by reference, would miss).
// It is idempotent, as CRI requires.
func (s *criServer) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	refOrID := req.GetImage().GetImage()
	removed := false
	s.ImageService.Lock()
	for key, img := range s.ImageService.Images {
		if key == refOrID || img.Id == refOrID {
			delete(s.ImageService.Images, key)
			removed = true
		}
	}
	s.ImageService.Unlock()
	if !removed {
		return &runtimeapi.RemoveImageResponse{}, nil
	}
	return persisted(s, &runtimeapi.RemoveImageResponse{}, "RemoveImage", "image", refOrID)
}

// ImageFsInfo reports one image filesystem. The upstream fake returns none,
// which makes the kubelet's CRI stats provider fail every summary with
// "imageFs information is unavailable"; UsedBytes must be set because the
// kubelet dereferences it. The mountpoint is the state directory so that a
// real cadvisor can resolve it to a real filesystem.
func (s *criServer) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	s.ImageService.Lock()
	var used uint64
	for _, img := range s.ImageService.Images {
		used += img.Size
	}
	n := uint64(len(s.ImageService.Images))
	s.ImageService.Unlock()
	return &runtimeapi.ImageFsInfoResponse{
		ImageFilesystems: []*runtimeapi.FilesystemUsage{{
			Timestamp:  time.Now().UnixNano(),
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: s.fsMountpoint},
			UsedBytes:  &runtimeapi.UInt64Value{Value: used},
			InodesUsed: &runtimeapi.UInt64Value{Value: n},
		}},
	}, nil
}
