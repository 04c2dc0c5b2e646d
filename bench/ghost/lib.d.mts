// Types of lib.mjs for the TypeScript benches that import it (bench/side-by-side.ts).
export declare const GHOST_DIR: string;
export declare function inDir(...parts: string[]): string;
export declare function ghostUrl(): string;
export declare function adminApi(): string;
export declare function adminJwt(): string;
export declare function authHeaders(): { Authorization: string };
export declare function login(): Promise<string>;
