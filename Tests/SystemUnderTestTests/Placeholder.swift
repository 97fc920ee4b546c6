// SystemUnderTestTests: work in progress; replaced as the module lands.
