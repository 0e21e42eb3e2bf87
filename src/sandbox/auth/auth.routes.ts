import type { RouteModule } from '../context';
import { bankPageRoutes } from './bank-page';
import { Grants } from './grants';
import { tokenEndpoint } from './token-endpoint';

/** The authorization server: the token endpoint and the mock bank's sign-in page, both at {auth_url}. */
export const registerAuthRoutes: RouteModule = ({ provider }, context) => {
  const grants = new Grants(context.clock, context.tokens);
  const page = bankPageRoutes(context, grants);
  provider.add('POST', '/connect/token', tokenEndpoint(context, grants)).add('GET', '/', page.show).add('POST', '/', page.submit);
};
