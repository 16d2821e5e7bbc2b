package blueprints

// BootcImagesPath is where the bootc Containerfile stores the images (one
// skopeo dir: directory each), which its loader copies from: the device's
// trust policy accepts the dir: transport there.
const BootcImagesPath = bootcImages
