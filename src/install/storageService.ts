// The service names live with partition scopes; re-exported here for the install layer.
export type { StorageService } from "../partition/partitionScope.js";
export { STORAGE_SERVICES } from "../partition/partitionScope.js";
