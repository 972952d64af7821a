// Each area's appliers; importing a file registers them.
export {};
